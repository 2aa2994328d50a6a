// Precompiled header: the libtorch headers every translation unit needs.
// Listed once here so a rebuild of one file does not re-parse them.
#pragma once
#include <torch/torch.h>

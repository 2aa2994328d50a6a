// A token file as nanoGPT's prepare scripts write it (train.bin: the ids as
// raw little-endian integers, numpy's tofile), read whole into int64 ids.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>

#include "core/data/token_windows.h"

namespace firebrand {

// The ids of `path`, each stored as `dtype` ('uint16', 'int32' or 'int64'), as one int64 row.
// Errors name the file, and its size when it does not hold whole tokens.
at::Tensor readTokenFile(const std::string& path, const std::string& dtype);

// tokenWindows over the file's ids, the options checked before the file is read.
TensorDataset tokenFileWindows(const std::string& path, const std::string& dtype, const TokenWindowOptions& options);

}  // namespace firebrand

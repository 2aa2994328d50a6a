// Reads a NumPy .npz archive (numpy.savez / savez_compressed): every array,
// by its name without ".npy".
#pragma once
#include <string>

#include "core/tensor_dict.h"

namespace firebrand {

TensorDict readNpz(const std::string& path);

}  // namespace firebrand

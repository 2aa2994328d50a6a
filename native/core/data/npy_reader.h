// Reads a NumPy .npy file (format versions 1-3) straight into a tensor of
// its dtype and shape; big-endian and Fortran-ordered arrays are converted.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>

namespace firebrand {

at::Tensor readNpy(const std::string& path);

}  // namespace firebrand

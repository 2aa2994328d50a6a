// Reads a NumPy .npy file (format versions 1-3) straight into a tensor of
// its dtype and shape; big-endian and Fortran-ordered arrays are converted.
#pragma once
#include <ATen/core/Tensor.h>

#include <istream>
#include <string>

namespace firebrand {

at::Tensor readNpy(const std::string& path);
// An array in .npy format from `in`; errors name `origin` (a file, or a member of an archive).
at::Tensor parseNpy(std::istream& in, const std::string& origin);

}  // namespace firebrand

// Reads an IDX file (the MNIST family's format), plain or gzip-compressed,
// straight into a tensor of the dtype and shape the file declares.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>

namespace firebrand {

at::Tensor readIdx(const std::string& path);

}  // namespace firebrand

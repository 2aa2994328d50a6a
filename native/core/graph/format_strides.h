// A 4-D tensor dense in two memory formats at once: [N, 1, H, W] and [N, C, 1, 1] maps, [O, I, 1, 1] and
// [C, 1, k, k] weights are laid out alike in rows and channels-last, and suggest_memory_format(), by which
// libtorch's kernels and oneDNN's prepacked convolution pick the layout they compute in, reads their
// strides as whichever order made them: one made in rows runs in rows beside channels-last neighbours.
#pragma once
#include <ATen/core/Tensor.h>

#include <vector>

namespace firebrand {

// The strides of a tensor of `sizes` dense in `format` (rows, or channels-last for 4-D sizes).
std::vector<int64_t> denseStrides(at::IntArrayRef sizes, c10::MemoryFormat format);

// `dense` (dense in `format`, rows or channels-last) as a view of the same memory whose strides
// suggest_memory_format() reads as `format`; `dense` itself where it already does.
at::Tensor withFormatStrides(const at::Tensor& dense, c10::MemoryFormat format);

}  // namespace firebrand

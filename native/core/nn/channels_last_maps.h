// Ops over the positions of float32 channels-last maps ([N, C, H, W] laid out as [N, H, W, C]) for a lowered
// predict, each a row of C channels at a time: a squeeze-and-excitation block's global average pool
// ([N, C, 1, 1]) and product with a per-channel gate, and the max pool of ResNet's stem (libtorch 2.14's took
// 373 us on ResNet-18's [1, 64, 112, 112] map where onnxruntime's took 181). On MobileNetV3's maps, libtorch 2.14's
// took 22-87 us a pool (its mean over the two outer dimensions of the layout) and 12-26 us a product (a broadcast over
// [1, C, 1, 1]) on a 2-core VM; these read each map once, the channels contiguous.
#pragma once
#include <ATen/core/Tensor.h>

#include <optional>

namespace firebrand {

// x.mean({2, 3}, keepdim) where gradients are not recorded and `x` is such a map; nothing where it is not. Each
// channel sums in float32 over blocks of 64 positions and the blocks' sums in float64.
std::optional<at::Tensor> globalAveragePool(const at::Tensor& x);

// x * gate where gradients are not recorded, `x` is such a map and `gate` is float32 [N or 1, C, 1, 1] on the CPU
// (a pool's output after its convolutions); nothing where they are not.
std::optional<at::Tensor> gateChannels(const at::Tensor& x, const at::Tensor& gate);

// F.max_pool2d(x, kernel, stride, padding, dilation) (floor mode; a NaN in a window is its maximum, as in
// PyTorch) where gradients are not recorded and `x` is such a map; nothing where it is not, or where a size is
// not two numbers, ceil mode is asked for, the padding passes half the kernel (libtorch's op says why), or the
// window has more than 256 positions (libtorch's op runs it).
std::optional<at::Tensor> maxPoolMap(const at::Tensor& x, at::IntArrayRef kernel, at::IntArrayRef stride,
                                     at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil);

}  // namespace firebrand

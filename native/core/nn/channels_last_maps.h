// A squeeze-and-excitation block's two per-channel ops on float32 channels-last maps ([N, C, H, W] laid out as
// [N, H, W, C]), for a lowered predict: the global average pool ([N, C, 1, 1]) and the product with a per-channel
// gate. On MobileNetV3's maps, libtorch 2.14's took 22-87 us a pool (its mean over the two outer dimensions of
// the layout) and 12-26 us a product (a broadcast over [1, C, 1, 1]) on a 2-core VM; these read each map once,
// the channels contiguous.
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

}  // namespace firebrand

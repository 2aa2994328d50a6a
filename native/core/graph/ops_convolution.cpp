// Convolution and pooling over 1, 2 or 3 spatial dimensions (sizes are lists
// of constants, one per dimension), and pixel shuffling.
#include <ATen/Functions.h>

#include "core/graph/op_support.h"

namespace firebrand {
namespace {

template <int N>
OpRun convolution(const NodeArgs& a) {
  a.expectCount(7);
  const int64_t x = a.tensor(0), w = a.tensor(1);
  const auto b = a.optionalTensor(2);
  const auto stride = constants(a.integers(3)), padding = constants(a.integers(4)), dilation = constants(a.integers(5));
  const int64_t groups = a.integer(6).value;
  return [=](GraphFrame& f) -> c10::IValue {
    if constexpr (N == 1) return at::conv1d(T(f, x), T(f, w), optionalT(f, b), stride, padding, dilation, groups);
    if constexpr (N == 2) return at::conv2d(T(f, x), T(f, w), optionalT(f, b), stride, padding, dilation, groups);
    if constexpr (N == 3) return at::conv3d(T(f, x), T(f, w), optionalT(f, b), stride, padding, dilation, groups);
  };
}

template <int N>
OpRun maxPool(const NodeArgs& a) {
  a.expectCount(6);
  const int64_t x = a.tensor(0);
  const auto kernel = constants(a.integers(1)), stride = constants(a.integers(2)), padding = constants(a.integers(3)),
             dilation = constants(a.integers(4));
  const bool ceil = a.flag(5);
  return [=](GraphFrame& f) -> c10::IValue {
    if constexpr (N == 1) return at::max_pool1d(T(f, x), kernel, stride, padding, dilation, ceil);
    if constexpr (N == 2) return at::max_pool2d(T(f, x), kernel, stride, padding, dilation, ceil);
    if constexpr (N == 3) return at::max_pool3d(T(f, x), kernel, stride, padding, dilation, ceil);
  };
}

template <int N>
OpRun avgPool(const NodeArgs& a) {
  a.expectCount(6);
  const int64_t x = a.tensor(0);
  const auto kernel = constants(a.integers(1)), stride = constants(a.integers(2)), padding = constants(a.integers(3));
  const bool ceil = a.flag(4), countPad = a.flag(5);
  return [=](GraphFrame& f) -> c10::IValue {
    if constexpr (N == 1) return at::avg_pool1d(T(f, x), kernel, stride, padding, ceil, countPad);
    if constexpr (N == 2) return at::avg_pool2d(T(f, x), kernel, stride, padding, ceil, countPad);
    if constexpr (N == 3) return at::avg_pool3d(T(f, x), kernel, stride, padding, ceil, countPad);
  };
}

template <int N>
OpRun adaptiveAvgPool(const NodeArgs& a) {
  a.expectCount(2);
  const int64_t x = a.tensor(0);
  const auto size = constants(a.integers(1));
  return [=](GraphFrame& f) -> c10::IValue {
    if constexpr (N == 1) return at::adaptive_avg_pool1d(T(f, x), size);
    if constexpr (N == 2) return at::adaptive_avg_pool2d(T(f, x), size);
    if constexpr (N == 3) return at::adaptive_avg_pool3d(T(f, x), size);
  };
}

// The values of F.adaptive_max_pool2d (no indices).
OpRun adaptiveMaxPool2d(const NodeArgs& a) {
  a.expectCount(2);
  const int64_t x = a.tensor(0);
  const auto size = constants(a.integers(1));
  return [=](GraphFrame& f) -> c10::IValue { return std::get<0>(at::adaptive_max_pool2d(T(f, x), size)); };
}

OpRun pixelShuffle(const NodeArgs& a) {
  a.expectCount(2);
  const int64_t x = a.tensor(0);
  const int64_t factor = a.integer(1).value;
  return [=](GraphFrame& f) -> c10::IValue { return at::pixel_shuffle(T(f, x), factor); };
}

}  // namespace

OpRows convolutionOps() {
  return {
      {"conv1d", convolution<1>, scriptCall("torch.conv1d")},
      {"conv2d", convolution<2>, scriptCall("torch.conv2d")},
      {"conv3d", convolution<3>, scriptCall("torch.conv3d")},
      {"maxPool1d", maxPool<1>, scriptCall("torch.max_pool1d")},
      {"maxPool2d", maxPool<2>, scriptCall("torch.max_pool2d")},
      {"maxPool3d", maxPool<3>, scriptCall("torch.max_pool3d")},
      {"avgPool1d", avgPool<1>, scriptCall("torch.avg_pool1d")},
      {"avgPool2d", avgPool<2>, scriptCall("torch.avg_pool2d")},
      {"avgPool3d", avgPool<3>, scriptCall("torch.avg_pool3d")},
      {"adaptiveAvgPool1d", adaptiveAvgPool<1>, scriptCall("torch.adaptive_avg_pool1d")},
      {"adaptiveAvgPool2d", adaptiveAvgPool<2>, scriptCall("torch.adaptive_avg_pool2d")},
      {"adaptiveAvgPool3d", adaptiveAvgPool<3>, scriptCall("torch.adaptive_avg_pool3d")},
      {"adaptiveMaxPool2d", adaptiveMaxPool2d,
       [](const GraphNode&, const ScriptArgs& a) {
         return "torch.adaptive_max_pool2d(" + a[0] + ", " + a[1] + ")[0]";
       }},
      {"pixelShuffle", pixelShuffle, scriptCall("torch.pixel_shuffle")},
  };
}

}  // namespace firebrand

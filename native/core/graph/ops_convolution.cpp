// Convolution and pooling over 1, 2 or 3 spatial dimensions (sizes are lists
// of constants, one per dimension), and pixel shuffling.
#include <ATen/Functions.h>

#include "core/errors.h"
#include "core/graph/op_support.h"
#include "core/onnx/onnx_layers.h"

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

OnnxValue convolutionOnnx(const OnnxOp& o) {
  return {onnxConvolution(o.b, o.tensor(0), o.tensor(1), o.optionalTensor(2).value_or(""), o.constants(3),
                          o.constants(4), o.constants(5), o.constant(6))};
}

std::vector<int64_t> twice(const std::vector<int64_t>& padding) {
  std::vector<int64_t> pads = padding;
  pads.insert(pads.end(), padding.begin(), padding.end());
  return pads;
}

OnnxValue maxPoolOnnx(const OnnxOp& o) {
  return {o.b.op("MaxPool", {o.tensor(0)},
                 {{"kernel_shape", o.constants(1)},
                  {"strides", o.constants(2)},
                  {"pads", twice(o.constants(3))},
                  {"dilations", o.constants(4)},
                  {"ceil_mode", int64_t{o.args.flag(5) ? 1 : 0}}})};
}

OnnxValue avgPoolOnnx(const OnnxOp& o) {
  return {o.b.op("AveragePool", {o.tensor(0)},
                 {{"kernel_shape", o.constants(1)},
                  {"strides", o.constants(2)},
                  {"pads", twice(o.constants(3))},
                  {"ceil_mode", int64_t{o.args.flag(4) ? 1 : 0}},
                  {"count_include_pad", int64_t{o.args.flag(5) ? 1 : 0}}})};
}

// Adaptive pooling: global to one position, else a fixed pool when the example's sizes divide evenly
// (spatial sizes are then part of the exported model).
OnnxForm adaptivePoolOnnx(const char* pool, const char* global) {
  return [pool, global](const OnnxOp& o) -> OnnxValue {
    const auto size = o.constants(1);
    const at::Tensor& x = o.example(0);
    const int64_t spatial = static_cast<int64_t>(size.size());
    bool ones = true;
    for (const int64_t s : size) ones = ones && s == 1;
    if (ones) return {o.b.op(global, {o.tensor(0)})};
    std::vector<int64_t> kernel;
    for (int64_t d = 0; d < spatial; ++d) {
      const int64_t in = x.size(x.dim() - spatial + d);
      if (in % size[d] != 0) {
        throw NotExportable("adaptive pooling from " + std::to_string(in) + " to " + std::to_string(size[d]) +
                            " positions is not a fixed pool; ONNX has no adaptive one");
      }
      kernel.push_back(in / size[d]);
    }
    return {o.b.op(pool, {o.tensor(0)}, {{"kernel_shape", kernel}, {"strides", kernel}})};
  };
}

OnnxValue pixelShuffleOnnx(const OnnxOp& o) {
  return {o.b.op("DepthToSpace", {o.tensor(0)}, {{"blocksize", o.constant(1)}, {"mode", std::string("CRD")}})};
}

}  // namespace

OpRows convolutionOps() {
  return {
      {"conv1d", convolution<1>, scriptCall("torch.conv1d"), convolutionOnnx},
      {"conv2d", convolution<2>, scriptCall("torch.conv2d"), convolutionOnnx},
      {"conv3d", convolution<3>, scriptCall("torch.conv3d"), convolutionOnnx},
      {"maxPool1d", maxPool<1>, scriptCall("torch.max_pool1d"), maxPoolOnnx},
      {"maxPool2d", maxPool<2>, scriptCall("torch.max_pool2d"), maxPoolOnnx},
      {"maxPool3d", maxPool<3>, scriptCall("torch.max_pool3d"), maxPoolOnnx},
      {"avgPool1d", avgPool<1>, scriptCall("torch.avg_pool1d"), avgPoolOnnx},
      {"avgPool2d", avgPool<2>, scriptCall("torch.avg_pool2d"), avgPoolOnnx},
      {"avgPool3d", avgPool<3>, scriptCall("torch.avg_pool3d"), avgPoolOnnx},
      {"adaptiveAvgPool1d", adaptiveAvgPool<1>, scriptCall("torch.adaptive_avg_pool1d"),
       adaptivePoolOnnx("AveragePool", "GlobalAveragePool")},
      {"adaptiveAvgPool2d", adaptiveAvgPool<2>, scriptCall("torch.adaptive_avg_pool2d"),
       adaptivePoolOnnx("AveragePool", "GlobalAveragePool")},
      {"adaptiveAvgPool3d", adaptiveAvgPool<3>, scriptCall("torch.adaptive_avg_pool3d"),
       adaptivePoolOnnx("AveragePool", "GlobalAveragePool")},
      {"adaptiveMaxPool2d", adaptiveMaxPool2d,
       [](const GraphNode&, const ScriptArgs& a) { return "torch.adaptive_max_pool2d(" + a[0] + ", " + a[1] + ")[0]"; },
       adaptivePoolOnnx("MaxPool", "GlobalMaxPool")},
      {"pixelShuffle", pixelShuffle, scriptCall("torch.pixel_shuffle"), pixelShuffleOnnx},
  };
}

}  // namespace firebrand

// Convolution and pooling over 1, 2 or 3 spatial dimensions (sizes are lists
// of constants, one per dimension), and pixel shuffling.
#include <ATen/Functions.h>

#include <algorithm>

#include "core/graph/inference_folding.h"
#include "core/graph/op_support.h"
#include "core/nn/channels_last_maps.h"
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
    if constexpr (N == 2) {
      // A lowered predict's channels-last map (channels_last_lowering.h) pools on firebrand's rows.
      if (inferenceLoweringActive()) {
        if (auto pooled = maxPoolMap(T(f, x), kernel, stride, padding, dilation, ceil)) return *pooled;
      }
      return at::max_pool2d(T(f, x), kernel, stride, padding, dilation, ceil);
    }
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
  const bool global = size.size() == N && std::all_of(size.begin(), size.end(), [](int64_t s) { return s == 1; });
  return [=](GraphFrame& f) -> c10::IValue {
    if constexpr (N == 1) return at::adaptive_avg_pool1d(T(f, x), size);
    if constexpr (N == 2) {
      // A lowered predict's channels-last map (channels_last_lowering.h) pools on firebrand's kernel.
      if (global && inferenceLoweringActive()) {
        if (auto pooled = globalAveragePool(T(f, x))) return *pooled;
      }
      return at::adaptive_avg_pool2d(T(f, x), size);
    }
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

OnnxValue maxPoolOnnx(const OnnxOp& o) {
  return {o.b.op("MaxPool", {o.tensor(0)},
                 {{"kernel_shape", o.constants(1)},
                  {"strides", o.constants(2)},
                  {"pads", onnxPads(o.constants(3))},
                  {"dilations", o.constants(4)},
                  {"ceil_mode", int64_t{o.args.flag(5) ? 1 : 0}}})};
}

OnnxValue avgPoolOnnx(const OnnxOp& o) {
  return {o.b.op("AveragePool", {o.tensor(0)},
                 {{"kernel_shape", o.constants(1)},
                  {"strides", o.constants(2)},
                  {"pads", onnxPads(o.constants(3))},
                  {"ceil_mode", int64_t{o.args.flag(4) ? 1 : 0}},
                  {"count_include_pad", int64_t{o.args.flag(5) ? 1 : 0}}})};
}

// Adaptive pooling: global to one position; otherwise PyTorch's bins, axis by axis (a bin's mean or max
// over a rectangle is that over its rows of that over its columns), bin i of n positions spanning
// [floor(i * n / out), ceil((i + 1) * n / out)), with n read from the input's shape when the model runs.
OnnxForm adaptivePoolOnnx(const char* reduction, const char* global) {
  return [reduction, global](const OnnxOp& o) -> OnnxValue {
    OnnxBuilder& b = o.b;
    const auto size = o.constants(1);
    bool ones = true;
    for (const int64_t s : size) ones = ones && s == 1;
    if (ones) return {b.op(global, {o.tensor(0)})};
    std::string x = o.tensor(0);
    const int64_t rank = o.rank(0), spatial = static_cast<int64_t>(size.size());
    for (int64_t d = 0; d < spatial; ++d) {
      const int64_t axis = rank - spatial + d, out = size[d];
      const std::string positions = b.shape(x, axis, axis + 1);
      const auto times = [&](int64_t factor) { return b.op("Mul", {positions, b.ints({factor})}); };
      std::vector<std::string> bins;
      for (int64_t i = 0; i < out; ++i) {
        const std::string start = b.op("Div", {times(i), b.ints({out})});
        const std::string end = b.op("Div", {b.op("Add", {times(i + 1), b.ints({out - 1})}), b.ints({out})});
        bins.push_back(b.reduce(reduction, b.op("Slice", {x, start, end, b.ints({axis})}), {axis}, true));
      }
      x = b.op("Concat", bins, {{"axis", axis}});
    }
    return {x};
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
       adaptivePoolOnnx("ReduceMean", "GlobalAveragePool")},
      {"adaptiveAvgPool2d", adaptiveAvgPool<2>, scriptCall("torch.adaptive_avg_pool2d"),
       adaptivePoolOnnx("ReduceMean", "GlobalAveragePool")},
      {"adaptiveAvgPool3d", adaptiveAvgPool<3>, scriptCall("torch.adaptive_avg_pool3d"),
       adaptivePoolOnnx("ReduceMean", "GlobalAveragePool")},
      {"adaptiveMaxPool2d", adaptiveMaxPool2d,
       [](const GraphNode&, const ScriptArgs& a) { return "torch.adaptive_max_pool2d(" + a[0] + ", " + a[1] + ")[0]"; },
       adaptivePoolOnnx("ReduceMax", "GlobalMaxPool")},
      {"pixelShuffle", pixelShuffle, scriptCall("torch.pixel_shuffle"), pixelShuffleOnnx},
  };
}

}  // namespace firebrand

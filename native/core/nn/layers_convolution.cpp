// Convolutions over 1, 2 or 3 spatial dimensions and the transposed ones.
#include <torch/nn.h>

#include "core/nn/layer_row.h"
#include "core/onnx/onnx_layers.h"

namespace firebrand {
namespace {

template <size_t N>
torch::ExpandingArray<N> sizes(const std::vector<int64_t>& values) {
  return torch::ExpandingArray<N>(c10::IntArrayRef(values));
}

template <size_t N, typename Conv, typename Options>
BuiltLayer convolution(ResolvedOptions& o, const char* layout) {
  const int64_t in = o.integer("inChannels");
  auto options = Options(in, o.integer("outChannels"), sizes<N>(o.integers("kernelSize", N)))
                     .stride(sizes<N>(o.integers("stride", N)))
                     .padding(sizes<N>(o.integers("padding", N)))
                     .dilation(sizes<N>(o.integers("dilation", N)))
                     .groups(o.integer("groups"))
                     .bias(o.flag("bias"));
  return {torch::nn::AnyModule(Conv(options)),
          std::string(layout) + " with C=" + std::to_string(in) + " (inChannels=" + std::to_string(in) + ")"};
}

template <size_t N, typename Conv, typename Options>
BuiltLayer transposed(ResolvedOptions& o, const char* layout) {
  const int64_t in = o.integer("inChannels");
  auto options = Options(in, o.integer("outChannels"), sizes<N>(o.integers("kernelSize", N)))
                     .stride(sizes<N>(o.integers("stride", N)))
                     .padding(sizes<N>(o.integers("padding", N)))
                     .output_padding(sizes<N>(o.integers("outputPadding", N)))
                     .groups(o.integer("groups"))
                     .bias(o.flag("bias"))
                     .dilation(sizes<N>(o.integers("dilation", N)));
  return {torch::nn::AnyModule(Conv(options)),
          std::string(layout) + " with C=" + std::to_string(in) + " (inChannels=" + std::to_string(in) + ")"};
}

// torch.convNd(x, weight, bias, stride, padding, dilation, groups).
std::function<ScriptCall(ResolvedOptions&, const LayerScriptContext&)> convolutionScript(size_t n) {
  return [n](ResolvedOptions& o, const LayerScriptContext& c) -> ScriptCall {
    return {"torch.conv" + std::to_string(n) + "d(" + c.operands.at(0) + ", " + c.tensor("weight") + ", " +
            c.tensor("bias") + ", " + scriptList(o.integers("stride", n)) + ", " +
            scriptList(o.integers("padding", n)) + ", " + scriptList(o.integers("dilation", n)) + ", " +
            std::to_string(o.integer("groups")) + ")"};
  };
}

// torch.conv_transposeNd(x, weight, bias, stride, padding, output_padding, groups, dilation).
std::function<ScriptCall(ResolvedOptions&, const LayerScriptContext&)> transposedScript(size_t n) {
  return [n](ResolvedOptions& o, const LayerScriptContext& c) -> ScriptCall {
    return {"torch.conv_transpose" + std::to_string(n) + "d(" + c.operands.at(0) + ", " + c.tensor("weight") + ", " +
            c.tensor("bias") + ", " + scriptList(o.integers("stride", n)) + ", " +
            scriptList(o.integers("padding", n)) + ", " + scriptList(o.integers("outputPadding", n)) + ", " +
            std::to_string(o.integer("groups")) + ", " + scriptList(o.integers("dilation", n)) + ")"};
  };
}

std::function<OnnxValue(ResolvedOptions&, const OnnxLayerCall&)> convolutionOnnx(size_t n) {
  return [n](ResolvedOptions& o, const OnnxLayerCall& c) -> OnnxValue {
    return {onnxConvolution(c.b, c.operands.at(0), c.tensor("weight"), c.tensor("bias"), o.integers("stride", n),
                            o.integers("padding", n), o.integers("dilation", n), o.integer("groups"))};
  };
}

std::function<OnnxValue(ResolvedOptions&, const OnnxLayerCall&)> transposedOnnx(size_t n) {
  return [n](ResolvedOptions& o, const OnnxLayerCall& c) -> OnnxValue {
    std::vector<std::string> inputs{c.operands.at(0), c.tensor("weight")};
    if (!c.tensor("bias").empty()) inputs.push_back(c.tensor("bias"));
    return {c.b.op("ConvTranspose", inputs,
                   {{"strides", o.integers("stride", n)},
                    {"pads", onnxPads(o.integers("padding", n))},
                    {"output_padding", o.integers("outputPadding", n)},
                    {"dilations", o.integers("dilation", n)},
                    {"group", o.integer("groups")}})};
  };
}

}  // namespace

LayerRows convolutionLayers() {
  using namespace torch::nn;
  return {
      {"conv1d", [](ResolvedOptions& o) { return convolution<1, Conv1d, Conv1dOptions>(o, "[N, C, L]"); },
       convolutionScript(1), convolutionOnnx(1)},
      {"conv2d", [](ResolvedOptions& o) { return convolution<2, Conv2d, Conv2dOptions>(o, "[N, C, H, W]"); },
       convolutionScript(2), convolutionOnnx(2)},
      {"conv3d", [](ResolvedOptions& o) { return convolution<3, Conv3d, Conv3dOptions>(o, "[N, C, D, H, W]"); },
       convolutionScript(3), convolutionOnnx(3)},
      {"convTranspose1d",
       [](ResolvedOptions& o) { return transposed<1, ConvTranspose1d, ConvTranspose1dOptions>(o, "[N, C, L]"); },
       transposedScript(1), transposedOnnx(1)},
      {"convTranspose2d",
       [](ResolvedOptions& o) { return transposed<2, ConvTranspose2d, ConvTranspose2dOptions>(o, "[N, C, H, W]"); },
       transposedScript(2), transposedOnnx(2)},
  };
}

}  // namespace firebrand

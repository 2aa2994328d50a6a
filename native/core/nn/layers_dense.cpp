// Layers whose weight is a matrix or a table: linear, embedding, and PReLU's slopes.
#include <torch/nn.h>

#include "core/nn/initial_values.h"
#include "core/nn/layer_row.h"
#include "core/nn/linear_layer.h"
#include "core/onnx/onnx_layers.h"

namespace firebrand {
namespace {

BuiltLayer linear(ResolvedOptions& o) {
  const int64_t in = o.integer("inFeatures"), out = o.integer("outFeatures");
  const bool bias = o.flag("bias");
  LinearLayer layer(nullptr);
  if (!UndrawnValues::isSet()) {
    layer = LinearLayer(torch::nn::LinearOptions(in, out).bias(bias));
  } else {
    layer = LinearLayer(torch::nn::LinearOptions(1, 0).bias(bias));  // empty tensors: nothing drawn
    layer->allocateUndrawn(in, out);
  }
  return {torch::nn::AnyModule(layer), "[*, " + std::to_string(in) + "] (inFeatures=" + std::to_string(in) + ")"};
}

BuiltLayer embedding(ResolvedOptions& o) {
  const int64_t rows = o.integer("numEmbeddings");
  auto options = torch::nn::EmbeddingOptions(rows, o.integer("embeddingDim"));
  if (const auto padding = o.optionalInteger("paddingIdx")) options.padding_idx(*padding);
  // A weight given (from_pretrained's way) is taken as it is: zeros, nothing drawn.
  if (UndrawnValues::isSet()) options._weight(at::zeros({rows, options.embedding_dim()}));
  torch::nn::Embedding layer(options);
  layer->options._weight(at::Tensor());  // the module holds the weight; the options need not
  return {torch::nn::AnyModule(layer),
          "integer indices in [0, " + std::to_string(rows - 1) + "] (numEmbeddings=" + std::to_string(rows) + ")"};
}

// torch.embedding's padding_idx: PyTorch's module keeps a negative one as rows + index.
ScriptCall embeddingScript(ResolvedOptions& o, const LayerScriptContext& c) {
  const int64_t rows = o.integer("numEmbeddings");
  const auto padding = o.optionalInteger("paddingIdx");
  const int64_t index = padding ? (*padding < 0 ? rows + *padding : *padding) : -1;
  return {"torch.embedding(" + c.tensor("weight") + ", " + c.operands.at(0) + ", " + std::to_string(index) +
          ", False, False)"};
}

BuiltLayer prelu(ResolvedOptions& o) {
  const int64_t parameters = o.integer("numParameters");
  return {torch::nn::AnyModule(
              torch::nn::PReLU(torch::nn::PReLUOptions().num_parameters(parameters).init(o.number("init")))),
          parameters == 1 ? "any shape" : "[N, C, *] with C=" + std::to_string(parameters) + " (numParameters)"};
}

OnnxValue linearOnnx(ResolvedOptions&, const OnnxLayerCall& c) {
  return {onnxLinear(c.b, c.operands.at(0), c.examples.at(0).toTensor().dim(), c.tensor("weight"), c.tensor("bias"))};
}

OnnxValue embeddingOnnx(ResolvedOptions&, const OnnxLayerCall& c) {
  return {c.b.op("Gather", {c.tensor("weight"), c.operands.at(0)}, {{"axis", int64_t{0}}})};
}

// PReLU's slopes [C] broadcast over [N, C, *]: as [C, 1, ...].
OnnxValue preluOnnx(ResolvedOptions& o, const OnnxLayerCall& c) {
  const int64_t rank = c.examples.at(0).toTensor().dim();
  std::string slope = c.tensor("weight");
  if (o.integer("numParameters") > 1 && rank > 2) {
    std::vector<int64_t> axes;
    for (int64_t d = 1; d < rank - 1; ++d) axes.push_back(d);
    slope = c.b.unsqueeze(slope, axes);
  }
  return {c.b.op("PRelu", {c.operands.at(0), slope})};
}

}  // namespace

LayerRows denseLayers() {
  return {
      {"linear", linear,
       [](ResolvedOptions&, const LayerScriptContext& c) -> ScriptCall {
         return {"torch.linear(" + c.operands.at(0) + ", " + c.tensor("weight") + ", " + c.tensor("bias") + ")"};
       },
       linearOnnx},
      {"embedding", embedding, embeddingScript, embeddingOnnx},
      {"prelu", prelu,
       [](ResolvedOptions&, const LayerScriptContext& c) -> ScriptCall {
         return {"torch.prelu(" + c.operands.at(0) + ", " + c.tensor("weight") + ")"};
       },
       preluOnnx},
  };
}

}  // namespace firebrand

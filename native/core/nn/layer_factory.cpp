#include "core/nn/layer_factory.h"

#include <torch/nn.h>

#include <map>

#include "core/errors.h"
#include "core/nn/layer_row.h"
#include "core/nn/lora.h"
#include "core/row_table.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

const std::map<std::string, LayerRow>& table() {
  static const auto rows = rowTable<LayerRow>(
      {denseLayers, convolutionLayers, normLayers, recurrentLayers, attentionLayers}, &LayerRow::type);
  return rows;
}

}  // namespace

const LayerRow* findLayer(const std::string& type) { return rowNamed(table(), type); }

std::vector<const LayerRow*> allLayers() { return rowsOf(table()); }

ScriptCall layerScript(const LayerSpec& spec, const LayerScriptContext& context) {
  const LayerRow* row = findLayer(spec.type);
  if (!row) throw InvalidState("exportTorchScript: no TorchScript form for layer type '" + spec.type + "'");
  ResolvedOptions options("exportTorchScript: " + spec.type, spec.options);
  return row->torchScript(options, context);
}

OnnxValue layerOnnx(const LayerSpec& spec, const OnnxLayerCall& call) {
  const LayerRow* row = findLayer(spec.type);
  if (!row || !row->onnx) throw NotExportable("firebrand has no ONNX form for layer type '" + spec.type + "' yet");
  ResolvedOptions options("exportOnnx: " + spec.type, spec.options);
  return row->onnx(options, call);
}

BuiltLayer buildLayer(const LayerSpec& spec, const std::string& owner) {
  const LayerRow* row = findLayer(spec.type);
  if (!row) throw InvalidState("firebrand bug: " + owner + ": layer type '" + spec.type + "' has no C++ row");
  ResolvedOptions options(owner, spec.options);
  BuiltLayer built = row->build(options);
  options.finish();
  return built;
}

at::Tensor runLayer(BuiltLayer& layer, const at::Tensor& input, const std::string& owner) {
  try {
    if (layer.lora) return withLora(*layer.lora, layer.module.forward(input), input, layer.module.ptr()->is_training());
    return layer.module.forward(input);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& error) {
    // libtorch says "index out of range in self": name the index and the table's size.
    if (const auto* embedding = dynamic_cast<const torch::nn::EmbeddingImpl*>(layer.module.ptr().get());
        embedding && !input.is_floating_point() && input.numel() > 0) {
      const int64_t rows = embedding->options.num_embeddings();
      const int64_t low = input.min().item<int64_t>(), high = input.max().item<int64_t>();
      if (low < 0 || high >= rows) {
        throw InvalidArgument(owner + ": index " + std::to_string(high >= rows ? high : low) + " in its input " +
                              shapeAndDtypeText(input) + " is outside [0, " + std::to_string(rows - 1) +
                              "] (numEmbeddings=" + std::to_string(rows) + ")");
      }
    }
    // libtorch says "mat1 and mat2 must have the same dtype": name the dtype, not the shape.
    const auto parameters = layer.module.ptr()->parameters();
    if (!input.is_floating_point() && !parameters.empty() && parameters.front().is_floating_point()) {
      throw InvalidArgument(
          owner + " takes floating-point inputs but got " + shapeAndDtypeText(input) + " (its weights are " +
          dtypeText(parameters.front().scalar_type()) +
          "): give the inputs as a Float32Array, or convert them with transforms.cast({ dtype: 'float32' })");
    }
    // A module cast apart from the rest (module.to(dtype)): PyTorch casts nothing between modules.
    if (input.is_floating_point() && !parameters.empty() && parameters.front().is_floating_point() &&
        parameters.front().scalar_type() != input.scalar_type()) {
      throw InvalidArgument(owner + " holds " + dtypeText(parameters.front().scalar_type()) + " weights but got " +
                            shapeAndDtypeText(input) + ": cast its input in forward (x.to('" +
                            dtypeText(parameters.front().scalar_type()) +
                            "')), or cast the whole model with model.to(dtype), which casts its inputs too");
    }
    throw ShapeMismatch(owner + " cannot take an input of shape " + shapeAndDtypeText(input) + "; it expects " +
                        layer.expectedInput + ". libtorch: " + torchReason(error));
  }
}

}  // namespace firebrand

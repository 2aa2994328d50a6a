// One row per built-in layer (the layers with parameters; the others are
// TypeScript modules that record their F op): how it builds from its resolved
// options, and how it exports, reading the same options.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/nn/layer_factory.h"
#include "core/nn/layer_onnx.h"
#include "core/nn/script_text.h"
#include "core/options/resolved_options.h"

namespace firebrand {

struct LayerRow {
  std::string type;
  std::function<BuiltLayer(ResolvedOptions&)> build;
  std::function<ScriptCall(ResolvedOptions&, const LayerScriptContext&)> torchScript;
  // The call as ONNX nodes (empty: exportOnnx names the layer as having no ONNX form).
  std::function<OnnxValue(ResolvedOptions&, const OnnxLayerCall&)> onnx;
};

using LayerRows = std::vector<LayerRow>;

// The families, each in its own file.
LayerRows denseLayers();        // linear, embedding, prelu
LayerRows convolutionLayers();  // conv1d/2d/3d, convTranspose1d/2d
LayerRows normLayers();         // batch, layer, group, instance and RMS norms
LayerRows recurrentLayers();    // lstm, gru, rnn
LayerRows attentionLayers();    // multiheadAttention

// The row of `type`, or nullptr.
const LayerRow* findLayer(const std::string& type);
std::vector<const LayerRow*> allLayers();

// The layer's call as TorchScript, from its spec as TypeScript resolved it.
ScriptCall layerScript(const LayerSpec& spec, const LayerScriptContext& context);
// The layer's call as ONNX nodes; throws NotExportable for a layer without an ONNX form.
OnnxValue layerOnnx(const LayerSpec& spec, const OnnxLayerCall& call);

}  // namespace firebrand

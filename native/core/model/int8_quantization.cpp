#include "core/model/int8_quantization.h"

#include <algorithm>
#include <set>

#include "core/nn/layer_factory.h"
#include "core/nn/linear_layer.h"

namespace firebrand {
namespace {

bool under(const std::string& path, const std::string& root) {
  return root.empty() || path == root || path.rfind(root + ".", 0) == 0;
}

bool isOutputHead(const std::string& path) {
  return path == "lm_head" || (path.size() > 8 && path.compare(path.size() - 8, 8, ".lm_head") == 0);
}

// The layers to quantize: linear, under a root, not the output head, their weight not tied.
std::vector<std::pair<std::string, LinearLayerImpl*>> int8Layers(Model& model, const std::vector<std::string>& roots) {
  std::set<std::string> tied;
  for (const auto& [alias, source] : model.tiedNames()) tied.insert({alias, source});
  std::vector<std::pair<std::string, LinearLayerImpl*>> layers;
  for (const auto& [path, layer] : model.builtLayers()) {
    auto* linear = dynamic_cast<LinearLayerImpl*>(layer->module.ptr().get());
    if (!linear || isOutputHead(path) || tied.count(path.empty() ? "weight" : path + ".weight")) continue;
    if (std::any_of(roots.begin(), roots.end(), [&](const std::string& root) { return under(path, root); }))
      layers.emplace_back(path, linear);
  }
  return layers;
}

}  // namespace

void freezeForInt8(Model& model, const std::vector<std::string>& roots) {
  std::vector<std::string> weights;
  for (auto& [path, linear] : int8Layers(model, roots)) {
    if (!linear->quantized()) weights.push_back(path.empty() ? "weight" : path + ".weight");
  }
  model.setFrozen(weights, true);
}

std::vector<std::string> quantizeInt8(Model& model, const std::vector<std::string>& roots) {
  std::vector<std::string> paths;
  for (auto& [path, linear] : int8Layers(model, roots)) {
    linear->quantizeInt8();
    paths.push_back(path);
  }
  return paths;
}

std::string firstQuantizedLayer(Model& model) {
  for (const auto& [path, layer] : model.builtLayers()) {
    auto* linear = dynamic_cast<LinearLayerImpl*>(layer->module.ptr().get());
    if (linear && linear->quantized()) return path.empty() ? "(the model)" : path;
  }
  return "";
}

}  // namespace firebrand

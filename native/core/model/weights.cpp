#include "core/model/weights.h"

#include <torch/utils.h>

#include "core/errors.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace

WeightsReport loadWeights(Model& model, const TensorDict& weights, bool strict, const std::string& origin) {
  TensorDict targets;
  for (const auto& named : {model.namedParameters(), model.namedBuffers()}) {
    for (const auto& item : named) targets.emplace(item.key(), item.value());
  }
  WeightsReport report;
  for (const auto& [name, target] : targets) {
    const auto it = weights.find(name);
    if (it == weights.end()) {
      report.missing.push_back(name);
    } else if (!it->second.sizes().equals(target.sizes())) {
      throw ShapeMismatch(origin + ": weight '" + name + "' has shape " + shapeText(it->second) +
                          " but the model's is " + shapeText(target));
    }
  }
  for (const auto& [name, value] : weights) {
    if (!targets.count(name)) report.unexpected.push_back(name);
  }
  if (strict && (!report.missing.empty() || !report.unexpected.empty())) {
    throw InvalidArgument(origin + ": the weights do not match the model" +
                          (report.missing.empty() ? "" : "; missing: " + joined(report.missing)) +
                          (report.unexpected.empty() ? "" : "; unexpected: " + joined(report.unexpected)));
  }
  torch::NoGradGuard noGrad;
  for (auto& [name, target] : targets) {
    const auto it = weights.find(name);
    if (it != weights.end()) target.copy_(it->second);
  }
  return report;
}

}  // namespace firebrand

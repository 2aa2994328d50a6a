#include "core/model/freezing.h"

#include <algorithm>

#include "core/errors.h"
#include "core/model/name_patterns.h"

namespace firebrand {
std::vector<std::string> parameterNames(const Model& model) {
  std::vector<std::string> names;
  for (const auto& item : model.namedParameters()) names.push_back(item.key());
  return names;
}

std::vector<std::string> freezeMatching(Model& model, const std::vector<std::string>& patterns, const std::string& owner) {
  const std::vector<std::string> names = namesMatching(patterns, parameterNames(model), owner);
  const auto named = model.namedParameters();
  const bool nothingLeft = std::all_of(named.begin(), named.end(), [&](const auto& item) {
    return !item.value().requires_grad() || std::find(names.begin(), names.end(), item.key()) != names.end();
  });
  if (nothingLeft) {
    throw InvalidArgument(owner + ": that freezes every parameter of the model (" + std::to_string(names.size()) +
                          " matched), leaving nothing to train");
  }
  model.setFrozen(names, true);
  return names;
}

std::vector<std::string> unfreezeMatching(Model& model, const std::vector<std::string>& patterns, const std::string& owner) {
  const std::vector<std::string> names = namesMatching(patterns, parameterNames(model), owner);
  model.setFrozen(names, false);
  return names;
}

}  // namespace firebrand

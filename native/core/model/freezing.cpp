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

// Submodules holding no parameter (not even one tied to another's), for an error that names one a pattern took.
std::vector<std::string> modulesWithoutParameters(const Model& model, std::vector<std::string> names) {
  for (const auto& [alias, name] : model.tiedNames()) names.push_back(alias);
  std::vector<std::string> empty;
  for (const std::string& path : model.modulePaths()) {
    const std::string prefix = path + ".";
    const bool holds =
        std::any_of(names.begin(), names.end(), [&](const std::string& name) { return name.rfind(prefix, 0) == 0; });
    if (!holds) empty.push_back(path);
  }
  return empty;
}

std::vector<std::string> freezeMatching(Model& model, const std::vector<std::string>& patterns,
                                        const std::string& owner) {
  const std::vector<std::string> all = parameterNames(model);
  const std::vector<std::string> names = namesMatching(patterns, all, owner, modulesWithoutParameters(model, all));
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

std::vector<std::string> unfreezeMatching(Model& model, const std::vector<std::string>& patterns,
                                          const std::string& owner) {
  const std::vector<std::string> all = parameterNames(model);
  const std::vector<std::string> names = namesMatching(patterns, all, owner, modulesWithoutParameters(model, all));
  model.setFrozen(names, false);
  return names;
}

}  // namespace firebrand

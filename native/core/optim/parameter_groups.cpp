#include "core/optim/parameter_groups.h"

#include <limits>

#include "core/errors.h"
#include "core/options/resolved_options.h"
#include "core/starts_with.h"

namespace firebrand {
namespace {

std::string someNames(const torch::OrderedDict<std::string, at::Tensor>& named) {
  std::string names;
  for (size_t i = 0; i < named.size() && i < 4; ++i) names += (i ? ", '" : "'") + named[i].key() + "'";
  return names + (named.size() > 4 ? ", ..." : "");
}

}  // namespace

std::vector<ParameterGroupPlan> planParameterGroups(const torch::OrderedDict<std::string, at::Tensor>& named,
                                                    const std::vector<ParamGroupSpec>& specs,
                                                    bool noDecayOnBiasAndNorm) {
  // One plan per spec, then the default group; each split in (decayed, not decayed).
  std::vector<ParameterGroupPlan> plans(specs.size() + 1);
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string owner = "optimizer.paramGroups[" + std::to_string(i) + "]";
    ResolvedOptions options(owner, specs[i].options);
    plans[i].lr = options.optionalNumber("lr");
    plans[i].weightDecay = options.optionalNumber("weightDecay");
    options.finish();
  }

  std::vector<std::vector<bool>> prefixUsed(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) prefixUsed[i].assign(specs[i].params.size(), false);
  std::vector<ParameterGroupPlan> noDecay(plans.size());
  for (const auto& item : named) {
    std::optional<size_t> group;
    for (size_t i = 0; i < specs.size(); ++i) {
      for (size_t p = 0; p < specs[i].params.size(); ++p) {
        if (!startsWith(item.key(), specs[i].params[p])) continue;
        if (group && *group != i) {
          throw InvalidArgument("optimizer.paramGroups: parameter '" + item.key() + "' is in paramGroups[" +
                                std::to_string(*group) + "] and paramGroups[" + std::to_string(i) +
                                "]; a parameter may be in one group only");
        }
        group = i;
        prefixUsed[i][p] = true;
      }
    }
    const size_t index = group.value_or(specs.size());
    auto& target = noDecayOnBiasAndNorm && item.value().dim() <= 1 ? noDecay[index] : plans[index];
    target.parameters.push_back(item.value());
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    for (size_t p = 0; p < specs[i].params.size(); ++p) {
      if (!prefixUsed[i][p]) {
        throw InvalidArgument("optimizer.paramGroups[" + std::to_string(i) + "]: '" + specs[i].params[p] +
                              "' is the prefix of no parameter name; names look like " + someNames(named));
      }
    }
  }

  std::vector<ParameterGroupPlan> result;
  for (size_t i = 0; i < plans.size(); ++i) {
    noDecay[i].lr = plans[i].lr;
    noDecay[i].weightDecay = 0.0;
    if (!plans[i].parameters.empty()) result.push_back(std::move(plans[i]));
    if (!noDecay[i].parameters.empty()) result.push_back(std::move(noDecay[i]));
  }
  return result;
}

}  // namespace firebrand

// Parameters chosen by pattern, for fine-tuning (freeze, unfreeze): a pattern is
// a module path or a parameter name as PyTorch writes them ("backbone",
// "layer1.0.conv1", "fc.bias"), where "*" stands for any text within one part
// and "**" for any number of parts ("layer*", "**.bn1", "encoder.**.bias").
// A pattern takes the names it matches and everything under a module path it
// matches.
#pragma once
#include <string>
#include <vector>

namespace firebrand {

// The `names` (in their order) that some pattern takes. A pattern that takes none is an error
// naming it, `owner` ("freeze") and some of the names there are; one that takes a path of
// `emptyModules` (modules holding none of the names) says so.
std::vector<std::string> namesMatching(const std::vector<std::string>& patterns, const std::vector<std::string>& names,
                                       const std::string& owner, const std::vector<std::string>& emptyModules = {});

}  // namespace firebrand

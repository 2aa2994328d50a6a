#include "core/model/name_patterns.h"

#include <algorithm>
#include <regex>

#include "core/errors.h"

namespace firebrand {
namespace {

std::regex patternRegex(const std::string& pattern, const std::string& owner) {
  if (pattern.empty()) throw InvalidArgument(owner + ": a pattern is empty; give a module path or a parameter name");
  std::string expression;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '*' && i + 1 < pattern.size() && pattern[i + 1] == '*') {
      expression += ".*";
      ++i;
    } else if (c == '*') {
      expression += "[^.]*";
    } else if (std::string("\\^$.|?+()[]{}").find(c) != std::string::npos) {
      expression += std::string("\\") + c;
    } else {
      expression += c;
    }
  }
  return std::regex(expression);
}

// Whether `pattern` matches `name` or one of the module paths it lies under.
bool takes(const std::regex& pattern, const std::string& name) {
  for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1)) {
    if (std::regex_match(name.begin(), name.begin() + static_cast<std::ptrdiff_t>(dot), pattern)) return true;
  }
  return std::regex_match(name, pattern);
}

std::string someNames(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size() && i < 4; ++i) text += (i ? ", '" : "'") + names[i] + "'";
  return text + (names.size() > 4 ? ", ..." : "");
}

}  // namespace

std::vector<std::string> namesMatching(const std::vector<std::string>& patterns, const std::vector<std::string>& names,
                                       const std::string& owner, const std::vector<std::string>& emptyModules) {
  if (patterns.empty()) throw InvalidArgument(owner + ": no pattern given; give module paths or parameter names");
  std::vector<bool> taken(names.size(), false);
  for (const std::string& pattern : patterns) {
    const std::regex regex = patternRegex(pattern, owner);
    bool any = false;
    for (size_t i = 0; i < names.size(); ++i) {
      if (!takes(regex, names[i])) continue;
      taken[i] = true;
      any = true;
    }
    const auto empty = std::find_if(emptyModules.begin(), emptyModules.end(),
                                    [&](const std::string& path) { return std::regex_match(path, regex); });
    if (!any && empty != emptyModules.end()) {
      throw InvalidArgument(owner + ": '" + pattern + "' takes module '" + *empty +
                            "', which has no parameters (an activation, " +
                            "pooling or dropout layer has none), so it takes nothing");
    }
    if (!any) {
      throw InvalidArgument(
          owner + ": '" + pattern + "' matches no parameter or module; parameter names look like " + someNames(names) +
          " (a module path takes the parameters under it; * stands for a part of a name, ** for several parts)");
    }
  }
  std::vector<std::string> matched;
  for (size_t i = 0; i < names.size(); ++i) {
    if (taken[i]) matched.push_back(names[i]);
  }
  return matched;
}

}  // namespace firebrand

// The environment variables that choose between firebrand's own kernel versions (docs/errors-and-runtime.md),
// each with the values it takes: the native code reads them here, and the JavaScript side names a value it
// does not take (FIREBRAND_UNKNOWN_SETTING) from the same table, instead of its default running silently.
#pragma once
#include <string>
#include <vector>

namespace firebrand {

struct KernelSetting {
  std::string name;
  std::vector<std::string> values;  // what it takes
  std::string defaultValue;         // what an unset or unknown value means
};

const std::vector<KernelSetting>& kernelSettings();
// The variable's value now if it is one it takes, else its default.
std::string kernelSetting(const std::string& name);

}  // namespace firebrand

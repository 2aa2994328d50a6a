// Options as they arrive from TypeScript, already checked and defaulted by
// its schemas: resolved_options.h reads them by name and type.
#pragma once
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace firebrand {

using OptionValue = std::variant<bool, double, std::string, std::vector<double>>;
using OptionMap = std::map<std::string, OptionValue>;

// Renders a value the way the caller wrote it, for error messages.
std::string describeOptionValue(const OptionValue& value);

// Integers without a decimal point, other numbers as iostream prints them.
std::string formatNumber(double number);

}  // namespace firebrand

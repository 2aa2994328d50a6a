// Loosely typed options as they arrive from a caller (a JS object, a JSON
// file): the readers in option_reader.h turn them into checked C++ values.
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

#include "core/options/option_value.h"

#include <cmath>
#include <sstream>

namespace firebrand {
std::string formatNumber(double number) {
  std::ostringstream out;
  if (std::isfinite(number) && number == std::floor(number) && std::fabs(number) < 1e15) {
    out << static_cast<long long>(number);
  } else {
    out << number;
  }
  return out.str();
}

std::string describeOptionValue(const OptionValue& value) {
  if (const auto* flag = std::get_if<bool>(&value)) return *flag ? "true" : "false";
  if (const auto* number = std::get_if<double>(&value)) return formatNumber(*number);
  if (const auto* text = std::get_if<std::string>(&value)) return "\"" + *text + "\"";
  const auto& list = std::get<std::vector<double>>(value);
  std::string out = "[";
  for (size_t i = 0; i < list.size(); ++i) {
    if (i > 0) out += ", ";
    out += formatNumber(list[i]);
  }
  return out + "]";
}

}  // namespace firebrand

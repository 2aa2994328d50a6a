#include "core/options/resolved_options.h"

#include <algorithm>
#include <cmath>

#include "core/errors.h"

namespace firebrand {

ResolvedOptions::ResolvedOptions(std::string owner, const OptionMap& options)
    : owner_(std::move(owner)), options_(options) {}

void ResolvedOptions::wrongType(const std::string& name, const char* expected) const {
  const auto it = options_.find(name);
  throw InvalidState("firebrand bug: " + owner_ + "." + name + " reached C++ as " +
                     (it == options_.end() ? std::string("nothing") : describeOptionValue(it->second)) + ", not " +
                     expected + " (its schema in src/ should have resolved it)");
}

const OptionValue& ResolvedOptions::get(const std::string& name) {
  read_.insert(name);
  const auto it = options_.find(name);
  if (it == options_.end()) wrongType(name, "a value");
  return it->second;
}

double ResolvedOptions::number(const std::string& name) {
  const double* value = std::get_if<double>(&get(name));
  if (!value) wrongType(name, "a number");
  return *value;
}

int64_t ResolvedOptions::integer(const std::string& name) {
  const double value = number(name);
  if (value != std::floor(value)) wrongType(name, "an integer");
  return static_cast<int64_t>(value);
}

bool ResolvedOptions::flag(const std::string& name) {
  const bool* value = std::get_if<bool>(&get(name));
  if (!value) wrongType(name, "true or false");
  return *value;
}

std::string ResolvedOptions::text(const std::string& name) {
  const std::string* value = std::get_if<std::string>(&get(name));
  if (!value) wrongType(name, "a string");
  return *value;
}

std::vector<double> ResolvedOptions::numbers(const std::string& name) {
  const OptionValue& value = get(name);
  if (const double* single = std::get_if<double>(&value)) return {*single};
  const auto* values = std::get_if<std::vector<double>>(&value);
  if (!values) wrongType(name, "a list of numbers");
  return *values;
}

bool ResolvedOptions::holdsText(const std::string& name) const {
  const auto it = options_.find(name);
  return it != options_.end() && std::holds_alternative<std::string>(it->second);
}

std::vector<int64_t> ResolvedOptions::integers(const std::string& name, size_t count) {
  const OptionValue& value = get(name);
  if (std::holds_alternative<double>(value)) return std::vector<int64_t>(std::max<size_t>(count, 1), integer(name));
  std::vector<int64_t> values;
  for (const double item : numbers(name)) {
    if (item != std::floor(item)) wrongType(name, "a list of integers");
    values.push_back(static_cast<int64_t>(item));
  }
  if (count != 0 && values.size() != count) wrongType(name, "a list of the right length");
  return values;
}

std::optional<int64_t> ResolvedOptions::optionalInteger(const std::string& name) {
  if (options_.count(name) == 0) return std::nullopt;
  return integer(name);
}

std::optional<double> ResolvedOptions::optionalNumber(const std::string& name) {
  if (options_.count(name) == 0) return std::nullopt;
  return number(name);
}

std::optional<std::vector<double>> ResolvedOptions::optionalNumbers(const std::string& name) {
  if (options_.count(name) == 0) return std::nullopt;
  return numbers(name);
}

void ResolvedOptions::finish() const {
  for (const auto& [name, value] : options_) {
    if (read_.count(name) == 0) {
      throw InvalidState("firebrand bug: " + owner_ + "." + name + " reached C++ but nothing reads it");
    }
  }
}

}  // namespace firebrand

#include "core/options/option_reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "core/errors.h"

namespace firebrand {
namespace {

bool isInteger(double value) {
  return std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9.0e15;
}

std::string joinQuoted(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += ", ";
    out += "'" + words[i] + "'";
  }
  return out;
}

size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const bool same = std::tolower(a[i - 1]) == std::tolower(b[j - 1]);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string closestMatch(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t bestDistance = std::numeric_limits<size_t>::max();
  for (const auto& candidate : candidates) {
    const size_t distance = editDistance(word, candidate);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = candidate;
    }
  }
  return bestDistance <= std::max<size_t>(2, word.size() / 3) ? best : "";
}

OptionReader::OptionReader(std::string owner, const OptionMap& options)
    : owner_(std::move(owner)), options_(options) {}

const OptionValue* OptionReader::find(const std::string& name) {
  known_.insert(name);
  const auto it = options_.find(name);
  return it == options_.end() ? nullptr : &it->second;
}

void OptionReader::fail(const std::string& name, const std::string& expected) const {
  const auto it = options_.find(name);
  const std::string given = it == options_.end() ? "nothing" : describeOptionValue(it->second);
  throw InvalidArgument(owner_ + ": field '" + name + "' must be " + expected + ", got " + given);
}

int64_t OptionReader::positiveInt(const std::string& name) {
  const OptionValue* value = find(name);
  const double* number = value ? std::get_if<double>(value) : nullptr;
  if (!number || !isInteger(*number) || *number < 1) fail(name, "a positive integer");
  return static_cast<int64_t>(*number);
}

int64_t OptionReader::positiveInt(const std::string& name, int64_t fallback) {
  if (options_.count(name) == 0) {
    known_.insert(name);
    return fallback;
  }
  return positiveInt(name);
}

int64_t OptionReader::nonNegativeInt(const std::string& name, int64_t fallback) {
  const int64_t value = integer(name, fallback);
  if (value < 0) fail(name, "an integer >= 0");
  return value;
}

int64_t OptionReader::integer(const std::string& name, int64_t fallback) {
  const auto value = optionalInteger(name);
  return value ? *value : fallback;
}

std::optional<int64_t> OptionReader::optionalInteger(const std::string& name) {
  const OptionValue* value = find(name);
  if (!value) return std::nullopt;
  const double* number = std::get_if<double>(value);
  if (!number || !isInteger(*number)) fail(name, "an integer");
  return static_cast<int64_t>(*number);
}

double OptionReader::number(const std::string& name, double fallback, double min, double max) {
  return optionalNumber(name, min, max).value_or(fallback);
}

std::optional<double> OptionReader::optionalNumber(const std::string& name, double min, double max) {
  const OptionValue* value = find(name);
  if (!value) return std::nullopt;
  const double* number = std::get_if<double>(value);
  if (!number || !std::isfinite(*number) || *number < min || *number > max) {
    std::string range = "a number";
    if (min > -kUnbounded) range += " >= " + formatNumber(min);
    if (max < kUnbounded) {
      range += (min > -kUnbounded ? " and <= " : " <= ") +
               formatNumber(max);
    }
    fail(name, range);
  }
  return *number;
}

bool OptionReader::flag(const std::string& name, bool fallback) {
  const OptionValue* value = find(name);
  if (!value) return fallback;
  const bool* flag = std::get_if<bool>(value);
  if (!flag) fail(name, "true or false");
  return *flag;
}

std::optional<std::string> OptionReader::optionalText(const std::string& name) {
  const OptionValue* value = find(name);
  if (!value) return std::nullopt;
  const std::string* text = std::get_if<std::string>(value);
  if (!text) fail(name, "a string");
  return *text;
}

std::string OptionReader::choice(const std::string& name, const std::string& fallback,
                                 const std::vector<std::string>& allowed) {
  const OptionValue* value = find(name);
  if (!value) return fallback;
  const std::string* text = std::get_if<std::string>(value);
  if (!text || std::find(allowed.begin(), allowed.end(), *text) == allowed.end()) {
    fail(name, "one of " + joinQuoted(allowed));
  }
  return *text;
}

std::vector<int64_t> OptionReader::intsAtLeast(const std::string& name, size_t count, int64_t min,
                                               const std::vector<int64_t>* fallback) {
  const std::string expected =
      std::string(min > 0 ? "a positive integer" : "an integer >= 0") + " or a list of " +
      std::to_string(count) + " of them";
  const OptionValue* value = find(name);
  if (!value) {
    if (!fallback) fail(name, expected);
    return *fallback;
  }
  std::vector<double> numbers;
  if (const double* number = std::get_if<double>(value)) {
    numbers.assign(count, *number);
  } else if (const auto* list = std::get_if<std::vector<double>>(value)) {
    numbers = *list;
  }
  if (numbers.size() != count) fail(name, expected);
  std::vector<int64_t> result;
  for (double number : numbers) {
    if (!isInteger(number) || number < static_cast<double>(min)) fail(name, expected);
    result.push_back(static_cast<int64_t>(number));
  }
  return result;
}

std::vector<int64_t> OptionReader::positiveInts(const std::string& name, size_t count) {
  return intsAtLeast(name, count, 1, nullptr);
}

std::vector<int64_t> OptionReader::positiveInts(const std::string& name, size_t count,
                                                std::vector<int64_t> fallback) {
  return intsAtLeast(name, count, 1, &fallback);
}

std::vector<int64_t> OptionReader::nonNegativeInts(const std::string& name, size_t count,
                                                   std::vector<int64_t> fallback) {
  return intsAtLeast(name, count, 0, &fallback);
}

std::vector<int64_t> OptionReader::positiveShape(const std::string& name) {
  const OptionValue* value = find(name);
  const auto* list = value ? std::get_if<std::vector<double>>(value) : nullptr;
  const size_t count = list && !list->empty() ? list->size() : 1;
  return positiveInts(name, count);
}

std::vector<double> OptionReader::numbers(const std::string& name, size_t count,
                                          std::vector<double> fallback, double min, double max) {
  const OptionValue* value = find(name);
  if (!value) return fallback;
  const auto* list = std::get_if<std::vector<double>>(value);
  const std::string expected = "a list of " + std::to_string(count) + " numbers in [" +
                               formatNumber(min) + ", " + formatNumber(max) + "]";
  if (!list || list->size() != count) fail(name, expected);
  for (double number : *list) {
    if (!std::isfinite(number) || number < min || number > max) fail(name, expected);
  }
  return *list;
}

std::vector<double> OptionReader::numberList(const std::string& name, double min, double max) {
  const OptionValue* value = find(name);
  const std::string expected = "a number or a non-empty list of numbers in [" + formatNumber(min) + ", " +
                               formatNumber(max) + "]";
  std::vector<double> numbers;
  if (const double* number = value ? std::get_if<double>(value) : nullptr) {
    numbers.push_back(*number);
  } else if (const auto* list = value ? std::get_if<std::vector<double>>(value) : nullptr) {
    numbers = *list;
  }
  if (numbers.empty()) fail(name, expected);
  for (double number : numbers) {
    if (!std::isfinite(number) || number < min || number > max) fail(name, expected);
  }
  return numbers;
}

void OptionReader::finish() const {
  const std::vector<std::string> known(known_.begin(), known_.end());
  for (const auto& [name, value] : options_) {
    if (known_.count(name)) continue;
    std::string message = owner_ + ": unknown field '" + name + "'";
    const std::string suggestion = closestMatch(name, known);
    message += suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)";
    message += known.empty() ? "; it takes no options" : "; known fields: " + joinQuoted(known);
    throw InvalidArgument(message);
  }
}

}  // namespace firebrand

// Reads and checks named options for one owner ("layers[2] (conv2d)",
// "optimizer (adamw)"). Every error names the owner, the field, the value
// given and what was expected; finish() rejects unknown fields with a
// did-you-mean.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/options/option_value.h"

namespace firebrand {

// "No bound" for the range checks of number().
inline constexpr double kUnbounded = std::numeric_limits<double>::max();

class OptionReader {
 public:
  OptionReader(std::string owner, const OptionMap& options);

  int64_t positiveInt(const std::string& name);
  int64_t positiveInt(const std::string& name, int64_t fallback);
  int64_t nonNegativeInt(const std::string& name, int64_t fallback);
  int64_t integer(const std::string& name, int64_t fallback);
  std::optional<int64_t> optionalInteger(const std::string& name);
  // A number in [min, max]; bounds are inclusive.
  double number(const std::string& name, double fallback, double min, double max);
  std::optional<double> optionalNumber(const std::string& name, double min, double max);
  bool flag(const std::string& name, bool fallback);
  std::optional<std::string> optionalText(const std::string& name);
  std::string choice(const std::string& name, const std::string& fallback,
                     const std::vector<std::string>& allowed);
  // One positive integer or a list of `count` of them (kernel sizes, strides).
  std::vector<int64_t> positiveInts(const std::string& name, size_t count);
  std::vector<int64_t> positiveInts(const std::string& name, size_t count,
                                    std::vector<int64_t> fallback);
  std::vector<int64_t> nonNegativeInts(const std::string& name, size_t count,
                                       std::vector<int64_t> fallback);
  // One positive integer or a non-empty list of them (LayerNorm's normalizedShape).
  std::vector<int64_t> positiveShape(const std::string& name);
  // A list of exactly `count` numbers in [min, max] (Adam's betas).
  std::vector<double> numbers(const std::string& name, size_t count,
                              std::vector<double> fallback, double min, double max);

  // One number or a non-empty list of them, each in [min, max] (per-channel means).
  std::vector<double> numberList(const std::string& name, double min, double max);

  // Throws for every field given but never read.
  void finish() const;

  const std::string& owner() const { return owner_; }

 private:
  const OptionValue* find(const std::string& name);
  [[noreturn]] void fail(const std::string& name, const std::string& expected) const;
  std::vector<int64_t> intsAtLeast(const std::string& name, size_t count, int64_t min,
                                   const std::vector<int64_t>* fallback);

  std::string owner_;
  const OptionMap& options_;
  std::set<std::string> known_;
};

// The candidate closest to `word` by edit distance, or "" when none is close.
std::string closestMatch(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace firebrand

// Options that TypeScript already checked and defaulted (src/options/schema.ts
// and the schemas built on it own every rule and default): read by name and
// type only. A field that is missing or of another type is a bug inside
// firebrand, reported as one; so is a field left unread (finish()).
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/options/option_value.h"

namespace firebrand {

class ResolvedOptions {
 public:
  ResolvedOptions(std::string owner, const OptionMap& options);

  double number(const std::string& name);
  int64_t integer(const std::string& name);
  bool flag(const std::string& name);
  std::string text(const std::string& name);
  // A list of numbers; a single number stands for a list of one.
  std::vector<double> numbers(const std::string& name);
  // A list of integers; a single integer stands for `count` copies of itself (a
  // square kernel), or for a list of one when `count` is 0.
  std::vector<int64_t> integers(const std::string& name, size_t count = 0);
  std::optional<int64_t> optionalInteger(const std::string& name);
  // Fields whose absence means "none" (class weights, a group's own lr).
  std::optional<double> optionalNumber(const std::string& name);
  std::optional<std::vector<double>> optionalNumbers(const std::string& name);
  bool has(const std::string& name) const { return options_.count(name) > 0; }
  // Whether a field that may be a name or an index (a CSV label column) is a name.
  bool holdsText(const std::string& name) const;
  // Throws for a field given but never read.
  void finish() const;

  const std::string& owner() const { return owner_; }

 private:
  const OptionValue& get(const std::string& name);
  [[noreturn]] void wrongType(const std::string& name, const char* expected) const;

  std::string owner_;
  const OptionMap& options_;
  std::set<std::string> read_;
};

}  // namespace firebrand

// A strict JSON parser for the small documents firebrand reads itself
// (safetensors headers): bounded nesting, exact integers, clear errors.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace firebrand {

struct JsonValue;
using JsonArray = std::vector<JsonValue>;
using JsonObject = std::map<std::string, JsonValue>;

struct JsonValue {
  // Integers that fit int64 are kept exact; other numbers are doubles.
  std::variant<std::nullptr_t, bool, int64_t, double, std::string, std::shared_ptr<JsonArray>,
               std::shared_ptr<JsonObject>>
      value;

  const JsonObject* object() const;
  const JsonArray* array() const;
  const std::string* string() const;
  const int64_t* integer() const;
};

// Throws InvalidArgument("<what>: <problem> at byte N") for malformed text,
// duplicate keys or nesting deeper than 64.
JsonValue parseJson(const std::string& text, const std::string& what);

}  // namespace firebrand

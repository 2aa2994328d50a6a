// What a model's forward returns: one tensor, or several by name (an array's
// by position, "0", "1", ...; an object's by key).
#pragma once
#include <string>
#include <vector>

namespace firebrand {

struct OutputLayout {
  enum class Kind { Tensor, Array, Object };
  Kind kind = Kind::Tensor;
  std::vector<std::string> names;  // one per output; {"output"} for one tensor

  OutputLayout() : names{"output"} {}
  OutputLayout(Kind returned, std::vector<std::string> outputNames) : kind(returned), names(std::move(outputNames)) {}
};

}  // namespace firebrand

// A layer as a caller describes it: a type name and its options.
#pragma once
#include <string>
#include <vector>

#include "core/options/option_value.h"

namespace firebrand {

struct LayerSpec {
  std::string type;
  OptionMap options;
};

}  // namespace firebrand

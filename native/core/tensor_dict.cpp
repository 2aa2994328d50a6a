#include "core/tensor_dict.h"

namespace firebrand {

std::string fieldNames(const TensorDict& fields) {
  std::string names;
  for (const auto& entry : fields) names += (names.empty() ? "" : ", ") + entry.first;
  return names;
}

}  // namespace firebrand

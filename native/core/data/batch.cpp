#include "core/data/batch.h"

#include "core/errors.h"

namespace firebrand {

int64_t Batch::size() const {
  if (fields.empty()) throw InvalidArgument("batch: it has no fields");
  return fields.begin()->second.size(0);
}

const at::Tensor& Batch::field(const std::string& name) const {
  const auto it = fields.find(name);
  if (it == fields.end()) {
    throw InvalidArgument("batch: no field '" + name + "' (it has " + fieldNames(fields) + ")");
  }
  return it->second;
}

}  // namespace firebrand

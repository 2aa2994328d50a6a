#include "core/data/batch.h"

#include "core/errors.h"

namespace firebrand {

void Batch::throwEmpty() { throw InvalidArgument("batch: it has no fields"); }

const at::Tensor& Batch::field(std::string_view name) const {
  const auto it = fields.find(name);
  if (it == fields.end()) {
    throw InvalidArgument("batch: no field '" + std::string(name) + "' (it has " + fieldNames(fields) + ")");
  }
  return it->second;
}

}  // namespace firebrand

// A pickle reader for torch.save's data.pkl that runs none of the pickle's
// code: it understands the opcodes Python's pickler writes for tensors in
// plain containers, and only the globals torch.load(weights_only=True) allows
// for them (OrderedDict, torch._utils._rebuild_tensor_v2 and _rebuild_parameter,
// the typed storages). Any other global or opcode is refused, naming it.
#pragma once
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace firebrand {

struct PickleValue;
using PickleList = std::vector<PickleValue>;
using PickleDict = std::vector<std::pair<PickleValue, PickleValue>>;  // in insertion order

// A storage a tensor points at: data/<key> in the archive, `numel` elements of `dtype`.
struct PickleStorage {
  std::string key;
  c10::ScalarType dtype;
  int64_t numel;
};

// torch._utils._rebuild_tensor_v2's arguments: a view of a storage.
struct PickleTensor {
  PickleStorage storage;
  int64_t offset;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

// An allowed global, before it is called (REDUCE) or used as a storage type.
struct PickleGlobal {
  std::string name;  // "module.name"
};

struct PickleValue {
  std::variant<std::monostate, bool, int64_t, double, std::string, std::shared_ptr<PickleList>,
               std::shared_ptr<PickleDict>, PickleGlobal, PickleStorage, PickleTensor>
      value;
  bool isTuple = false;  // a PickleList built as a tuple
};

// The object data.pkl holds. `origin` names the file in errors.
PickleValue unpickleRestricted(const std::string& bytes, const std::string& origin);

}  // namespace firebrand

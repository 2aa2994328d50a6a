// One batch: tensors by field name, samples first. A model's forward reads
// "input" and a loss "target"; a TorchScript training_step gets every field.
#pragma once
#include <string_view>

#include "core/tensor_dict.h"

namespace firebrand {

inline constexpr const char* kInputField = "input";
inline constexpr const char* kTargetField = "target";

struct Batch {
  TensorDict fields;
  // Each sample's index in its dataset, when a DatasetLoader cut the batch
  // (empty for streamed batches): a view of the loader's epoch order, valid
  // while the loader lives. Errors about a sample name it by this index.
  c10::ArrayRef<int64_t> sampleIndices;

  // Samples in the batch (the first dimension of its fields).
  int64_t size() const {
    if (fields.empty()) throwEmpty();
    return fields.begin()->second.size(0);
  }
  // The field `name`, or an error naming the fields there are.
  const at::Tensor& field(std::string_view name) const;
  const at::Tensor& inputs() const { return field(kInputField); }
  const at::Tensor& targets() const { return field(kTargetField); }

 private:
  [[noreturn]] static void throwEmpty();
};

}  // namespace firebrand

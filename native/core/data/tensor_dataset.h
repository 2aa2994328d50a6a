// A dataset held as named tensors whose first dimension indexes the samples
// ("input" and "target", and any others a TorchScript step reads, such as
// "mask"). Batches are cut by index, so shuffled order costs no copy.
#pragma once
#include <c10/util/ArrayRef.h>

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/data/batch.h"

namespace firebrand {

class TensorDataset {
 public:
  // Checks that there is at least one field, that every field has the same
  // number of samples, and that there are samples.
  explicit TensorDataset(TensorDict fields);
  TensorDataset(at::Tensor inputs, at::Tensor targets);

  int64_t size() const { return size_; }
  const TensorDict& fields() const { return fields_; }
  bool has(const std::string& name) const { return fields_.count(name) > 0; }
  // The field `name`, or an error naming the dataset's fields.
  const at::Tensor& field(const std::string& name) const;
  const at::Tensor& inputs() const { return field(kInputField); }
  const at::Tensor& targets() const { return field(kTargetField); }
  // Shape of one sample of a field (without the samples dimension).
  std::vector<int64_t> sampleShape(const std::string& name = kInputField) const;

  // Samples [start, end) sharing this dataset's memory.
  TensorDataset slice(int64_t start, int64_t end) const;
  // Random (train, validation) parts, as torch.utils.data.random_split(dataset,
  // [1 - fraction, fraction], generator seeded `seed`): the same samples in
  // the same order. The parts are copies.
  std::pair<TensorDataset, TensorDataset> randomSplit(std::array<double, 2> fractions, uint64_t seed) const;
  // The samples `indices`, in that order (copies), written into `reuse`'s
  // tensors (held exclusively by the caller) where their dtype and shape fit.
  Batch batch(c10::ArrayRef<int64_t> indices, const Batch* reuse = nullptr) const;

 private:
  TensorDict fields_;
  int64_t size_ = 0;
};

}  // namespace firebrand

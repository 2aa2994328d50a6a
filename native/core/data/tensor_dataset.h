// A dataset held as two tensors whose first dimension indexes the samples.
// Batches are cut by index, so shuffled order costs no copy of the dataset.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace firebrand {

struct Batch {
  at::Tensor inputs;
  at::Tensor targets;
};

class TensorDataset {
 public:
  TensorDataset(at::Tensor inputs, at::Tensor targets);

  int64_t size() const { return inputs_.size(0); }
  const at::Tensor& inputs() const { return inputs_; }
  const at::Tensor& targets() const { return targets_; }
  std::vector<int64_t> sampleShape() const;
  std::vector<int64_t> targetShape() const;

  // Samples [start, end) sharing this dataset's memory.
  TensorDataset slice(int64_t start, int64_t end) const;
  // Random (train, validation) parts, as torch.utils.data.random_split(dataset,
  // [1 - fraction, fraction], generator seeded `seed`): the same samples in
  // the same order. The parts are copies.
  std::pair<TensorDataset, TensorDataset> randomSplit(double fraction, uint64_t seed) const;
  Batch batch(const at::Tensor& indices) const;

 private:
  at::Tensor inputs_;
  at::Tensor targets_;
};

}  // namespace firebrand

#include "core/data/tensor_dataset.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

#include "core/errors.h"
#include "core/shape_text.h"

namespace firebrand {

TensorDataset::TensorDataset(at::Tensor inputs, at::Tensor targets)
    : inputs_(std::move(inputs)), targets_(std::move(targets)) {
  if (inputs_.dim() == 0 || targets_.dim() == 0) {
    throw ShapeMismatch("dataset: inputs " + shapeText(inputs_) + " and targets " + shapeText(targets_) +
                        " must both have a first dimension indexing the samples");
  }
  if (inputs_.size(0) != targets_.size(0)) {
    throw ShapeMismatch("dataset: inputs " + shapeText(inputs_) + " hold " + std::to_string(inputs_.size(0)) +
                        " samples but targets " + shapeText(targets_) + " hold " +
                        std::to_string(targets_.size(0)) + "; the first dimensions must match");
  }
  if (inputs_.size(0) == 0) throw InvalidArgument("dataset: it holds no samples");
}

std::vector<int64_t> TensorDataset::sampleShape() const {
  return inputs_.sizes().slice(1).vec();
}

std::vector<int64_t> TensorDataset::targetShape() const {
  return targets_.sizes().slice(1).vec();
}

TensorDataset TensorDataset::slice(int64_t start, int64_t end) const {
  if (start < 0 || end > size() || start >= end) {
    throw InvalidArgument("dataset.slice(" + std::to_string(start) + ", " + std::to_string(end) +
                          "): expected 0 <= start < end <= " + std::to_string(size()));
  }
  return TensorDataset(inputs_.narrow(0, start, end - start), targets_.narrow(0, start, end - start));
}

std::pair<TensorDataset, TensorDataset> TensorDataset::randomSplit(double fraction, uint64_t seed) const {
  if (!(fraction > 0 && fraction < 1)) {
    throw InvalidArgument("dataset.split: fraction must be between 0 and 1 (exclusive), got " + std::to_string(fraction));
  }
  // random_split's lengths: floor of each share, the remainder handed out from the first part on.
  int64_t lengths[2] = {static_cast<int64_t>(std::floor(size() * (1 - fraction))),
                        static_cast<int64_t>(std::floor(size() * fraction))};
  for (int64_t i = 0, rest = size() - lengths[0] - lengths[1]; i < rest; ++i) ++lengths[i % 2];
  if (lengths[0] == 0 || lengths[1] == 0) {
    throw InvalidArgument("dataset.split: a fraction of " + std::to_string(fraction) + " of " +
                          std::to_string(size()) + " samples leaves one part empty");
  }
  at::Generator generator = at::detail::createCPUGenerator(seed);
  const at::Tensor order = at::randperm(size(), generator, at::TensorOptions().dtype(at::kLong));
  const Batch first = batch(order.narrow(0, 0, lengths[0]));
  const Batch second = batch(order.narrow(0, lengths[0], lengths[1]));
  return {TensorDataset(first.inputs, first.targets), TensorDataset(second.inputs, second.targets)};
}

Batch TensorDataset::batch(const at::Tensor& indices) const {
  return {inputs_.index_select(0, indices), targets_.index_select(0, indices)};
}

}  // namespace firebrand

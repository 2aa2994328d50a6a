#include "core/data/tensor_dataset.h"

#include <ATen/ATen.h>

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

Batch TensorDataset::batch(const at::Tensor& indices) const {
  return {inputs_.index_select(0, indices), targets_.index_select(0, indices)};
}

}  // namespace firebrand

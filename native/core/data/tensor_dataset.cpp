#include "core/data/tensor_dataset.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

#include "core/data/row_gather.h"
#include "core/errors.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

std::string fieldShapes(const TensorDict& fields) {
  std::string shapes;
  for (const auto& [name, tensor] : fields) shapes += (shapes.empty() ? "" : ", ") + name + " " + shapeText(tensor);
  return shapes;
}

}  // namespace

TensorDataset::TensorDataset(TensorDict fields) : fields_(std::move(fields)) {
  if (fields_.empty()) throw InvalidArgument("dataset: it needs at least one field, such as 'input'");
  for (const auto& [name, tensor] : fields_) {
    if (name.empty()) throw InvalidArgument("dataset: a field name is empty");
    if (!tensor.defined() || tensor.dim() == 0) {
      throw ShapeMismatch("dataset: field '" + name + "' " + shapeText(tensor) +
                          " needs a first dimension indexing the samples");
    }
  }
  size_ = fields_.begin()->second.size(0);
  for (const auto& [name, tensor] : fields_) {
    if (tensor.size(0) != size_) {
      throw ShapeMismatch("dataset: fields " + fieldShapes(fields_) +
                          " hold different numbers of samples; their first dimensions must match");
    }
  }
  if (size_ == 0) throw InvalidArgument("dataset: it holds no samples (" + fieldShapes(fields_) + ")");
}

TensorDataset::TensorDataset(at::Tensor inputs, at::Tensor targets)
    : TensorDataset(TensorDict{{kInputField, std::move(inputs)}, {kTargetField, std::move(targets)}}) {}

const at::Tensor& TensorDataset::field(const std::string& name) const {
  const auto it = fields_.find(name);
  if (it == fields_.end()) {
    throw InvalidArgument("dataset: no field '" + name + "' (it has " + fieldNames(fields_) + ")");
  }
  return it->second;
}

std::vector<int64_t> TensorDataset::sampleShape(const std::string& name) const {
  return field(name).sizes().slice(1).vec();
}

TensorDataset TensorDataset::slice(int64_t start, int64_t end) const {
  if (start < 0 || end > size() || start >= end) {
    throw InvalidArgument("dataset.slice(" + std::to_string(start) + ", " + std::to_string(end) +
                          "): expected 0 <= start < end <= " + std::to_string(size()));
  }
  TensorDict part;
  for (const auto& [name, tensor] : fields_) part.emplace(name, tensor.narrow(0, start, end - start));
  return TensorDataset(std::move(part));
}

std::pair<TensorDataset, TensorDataset> TensorDataset::randomSplit(std::array<double, 2> fractions,
                                                                   uint64_t seed) const {
  for (const double fraction : fractions) {
    if (!(fraction > 0 && fraction < 1)) {
      throw InvalidArgument("dataset.split: fraction must be between 0 and 1 (exclusive), got " +
                            std::to_string(fraction));
    }
  }
  // random_split's lengths: floor of each share, the remainder handed out from the first part on.
  int64_t lengths[2] = {static_cast<int64_t>(std::floor(size() * fractions[0])),
                        static_cast<int64_t>(std::floor(size() * fractions[1]))};
  for (int64_t i = 0, rest = size() - lengths[0] - lengths[1]; i < rest; ++i) ++lengths[i % 2];
  if (lengths[0] == 0 || lengths[1] == 0) {
    throw InvalidArgument("dataset.split: a validation fraction of " + std::to_string(fractions[1]) + " of " +
                          std::to_string(size()) + " samples leaves one part empty");
  }
  at::Generator generator = at::detail::createCPUGenerator(seed);
  const at::Tensor order = at::randperm(size(), generator, at::TensorOptions().dtype(at::kLong));
  const c10::ArrayRef<int64_t> samples(order.data_ptr<int64_t>(), static_cast<size_t>(order.numel()));
  return {TensorDataset(batch(samples.slice(0, lengths[0])).fields),
          TensorDataset(batch(samples.slice(lengths[0], lengths[1])).fields)};
}

Batch TensorDataset::batch(c10::ArrayRef<int64_t> indices, const Batch* reuse) const {
  Batch batch;
  for (const auto& [name, tensor] : fields_) {
    const at::Tensor* into = nullptr;
    if (reuse != nullptr) {
      const auto it = reuse->fields.find(name);
      if (it != reuse->fields.end()) into = &it->second;
    }
    batch.fields.emplace(name, gatherRows(tensor, indices, into));
  }
  return batch;
}

}  // namespace firebrand

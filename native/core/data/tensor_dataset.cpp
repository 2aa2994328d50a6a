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

TensorDataset::TensorDataset(TensorDict fields, ImageFiles images) : TensorDataset(std::move(fields)) {
  if (size_ != images.size()) {
    throw ShapeMismatch("dataset: " + std::to_string(images.size()) + " image files for fields " +
                        fieldShapes(fields_) + "; each file needs one sample of each field");
  }
  if (fields_.count(kInputField) > 0) throw InvalidArgument("dataset: 'input' is decoded from the image files");
  images_ = std::make_shared<const ImageFiles>(std::move(images));
}

TensorDataset::TensorDataset(at::Tensor inputs, at::Tensor targets)
    : TensorDataset(TensorDict{{kInputField, std::move(inputs)}, {kTargetField, std::move(targets)}}) {}

const at::Tensor& TensorDataset::field(const std::string& name) const {
  if (images_ && name == kInputField) {
    throw InvalidArgument("dataset: 'input' is decoded from " + std::to_string(images_->size()) +
                          " image files as batches are cut; it is not held as a tensor (use batches())");
  }
  const auto it = fields_.find(name);
  if (it == fields_.end()) {
    throw InvalidArgument("dataset: no field '" + name + "' (it has " + fieldNames(fields_) + ")");
  }
  return it->second;
}

std::vector<int64_t> TensorDataset::sampleShape(const std::string& name) const {
  if (images_ && name == kInputField) return images_->sampleShape();
  return field(name).sizes().slice(1).vec();
}

TensorDataset TensorDataset::slice(int64_t start, int64_t end) const {
  if (start < 0 || end > size() || start >= end) {
    throw InvalidArgument("dataset.slice(" + std::to_string(start) + ", " + std::to_string(end) +
                          "): expected 0 <= start < end <= " + std::to_string(size()));
  }
  if (images_) {
    std::vector<int64_t> indices(static_cast<size_t>(end - start));
    for (int64_t i = start; i < end; ++i) indices[static_cast<size_t>(i - start)] = i;
    return select(indices);
  }
  TensorDict part;
  for (const auto& [name, tensor] : fields_) part.emplace(name, tensor.narrow(0, start, end - start));
  return TensorDataset(std::move(part));
}

TensorDataset TensorDataset::select(c10::ArrayRef<int64_t> indices) const {
  TensorDict part;
  for (const auto& [name, tensor] : fields_) part.emplace(name, gatherRows(tensor, indices));
  if (images_) return TensorDataset(std::move(part), images_->select(indices));
  return TensorDataset(std::move(part));
}

TensorDataset TensorDataset::withImageTransforms(ImageTransforms transforms) const {
  if (!images_) throw InvalidArgument("dataset: image transforms need an image dataset (Dataset.fromImageFolder)");
  return TensorDataset(fields_, images_->withTransforms(std::move(transforms)));
}

TensorDataset TensorDataset::withFields(const TensorDict& replaced) const {
  TensorDict fields = fields_;
  for (const auto& [name, tensor] : replaced) fields.insert_or_assign(name, tensor);
  return images_ ? TensorDataset(std::move(fields), *images_) : TensorDataset(std::move(fields));
}

TensorDataset TensorDataset::withSampleWeights(const at::Tensor& given, int64_t numSamples, bool replacement) const {
  at::Tensor weights = given;
  if (!weights.defined()) {
    // 'balanced': each sample weighs 1 / the count of its class, so that every class is drawn as often.
    const at::Tensor labels = targets().reshape({size_, -1}).select(1, 0).to(at::kLong);
    if (targets().is_floating_point() || labels.min().item<int64_t>() < 0) {
      throw InvalidArgument("withSampleWeights('balanced'): the targets must be class indices (whole numbers >= 0)");
    }
    weights = at::bincount(labels).to(at::kDouble).reciprocal().index_select(0, labels);
  }
  weights = weights.to(at::kDouble).contiguous();
  if (weights.dim() != 1 || weights.size(0) != size_) {
    throw ShapeMismatch("withSampleWeights: weights must hold one number per sample (" + std::to_string(size_) +
                        "), got " + std::to_string(weights.numel()));
  }
  if (!weights.isfinite().all().item<bool>() || (weights < 0).any().item<bool>() || weights.sum().item<double>() <= 0) {
    throw InvalidArgument("withSampleWeights: weights must be finite and >= 0, and not all 0");
  }
  const int64_t drawable = weights.gt(0).sum().item<int64_t>();
  if (numSamples < 1 || (!replacement && numSamples > drawable)) {
    throw InvalidArgument("withSampleWeights: numSamples must be at least 1" +
                          (replacement ? std::string()
                                       : " and, without replacement, at most the " + std::to_string(drawable) +
                                             " samples of weight > 0") +
                          ", got " + std::to_string(numSamples));
  }
  TensorDataset weighted = *this;
  weighted.sampleWeights_ = std::make_shared<const SampleWeights>(SampleWeights{weights, numSamples, replacement});
  return weighted;
}

SamplerOptions TensorDataset::trainingSampler(SamplerOptions sampler) const {
  sampler.weights = sampleWeights_;
  return sampler;
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
  return {select(samples.slice(0, lengths[0])), select(samples.slice(lengths[0], lengths[1]))};
}

Batch TensorDataset::batch(c10::ArrayRef<int64_t> indices, const Batch* reuse, at::Generator* generator) const {
  if (images_) return decodeBatch(indices, generator);
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

Batch TensorDataset::decodeBatch(c10::ArrayRef<int64_t> indices, at::Generator* generator) const {
  at::Generator fallback = at::detail::createCPUGenerator(0);
  at::Generator& draws = generator != nullptr ? *generator : fallback;
  std::vector<at::Tensor> images;
  std::vector<int64_t> kept;
  for (const int64_t index : indices) {
    if (index < 0 || index >= size()) {
      throw InvalidArgument("dataset: sample " + std::to_string(index) + " is outside [0, " + std::to_string(size()) +
                            ")");
    }
    std::optional<at::Tensor> image = images_->load(index, draws);
    if (!image) continue;
    if (!images.empty() && image->sizes() != images.front().sizes()) {
      throw ShapeMismatch(images_->paths()[static_cast<size_t>(index)] + " is " + shapeText(*image) + " but " +
                          images_->paths()[static_cast<size_t>(kept.front())] + " is " + shapeText(images.front()) +
                          " after the transforms; a batch needs one size: end the transforms with resize and "
                          "centerCrop, or randomResizedCrop");
    }
    images.push_back(std::move(*image));
    kept.push_back(index);
  }
  if (images.empty()) {
    throw FileError("dataset: every image of a batch of " + std::to_string(indices.size()) +
                    " was broken and skipped (the first: " + images_->paths()[static_cast<size_t>(indices[0])] + ")");
  }
  Batch batch;
  batch.fields.emplace(kInputField, at::stack(images));
  for (const auto& [name, tensor] : fields_) batch.fields.emplace(name, gatherRows(tensor, kept));
  return batch;
}

}  // namespace firebrand

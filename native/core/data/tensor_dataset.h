// A dataset held as named tensors whose first dimension indexes the samples
// ("input" and "target", and any others a TorchScript step reads, such as
// "mask"). Batches are cut by index, so shuffled order costs no copy. An image
// dataset's "input" is decoded from its files instead, as each batch is cut.
#pragma once
#include <c10/util/ArrayRef.h>

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/data/batch.h"
#include "core/data/batch_sampler.h"
#include "core/data/image_files.h"

namespace firebrand {

class TensorDataset {
 public:
  // Checks that there is at least one field, that every field has the same
  // number of samples, and that there are samples.
  explicit TensorDataset(TensorDict fields);
  TensorDataset(at::Tensor inputs, at::Tensor targets);
  // "input" decoded from `images`, the other fields (a "target") held.
  TensorDataset(TensorDict fields, ImageFiles images);

  int64_t size() const { return size_; }
  // The fields held as tensors (all but an image dataset's input).
  const TensorDict& fields() const { return fields_; }
  bool has(const std::string& name) const { return fields_.count(name) > 0 || (images_ && name == kInputField); }
  // The files "input" is decoded from, or null.
  const ImageFiles* images() const { return images_.get(); }
  // The same images through other per-image transforms.
  TensorDataset withImageTransforms(ImageTransforms transforms) const;
  // The same samples with `replaced` fields (each holding every sample) in place of their own or beside them.
  TensorDataset withFields(const TensorDict& replaced) const;
  // The same samples, a training epoch drawing them as WeightedRandomSampler does: `weights` (one per
  // sample, finite, >= 0, not all 0) or, undefined, each sample 1 / its target class's count ('balanced').
  TensorDataset withSampleWeights(const at::Tensor& weights, int64_t numSamples, bool replacement) const;
  // `sampler` for a training epoch over this dataset: with its sample weights, if it has some.
  SamplerOptions trainingSampler(SamplerOptions sampler) const;
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
  // Images are transformed with `generator` (one seeded 0 when null); a broken
  // file left out (BrokenImagePolicy::Skip) leaves its sample out of every field.
  Batch batch(c10::ArrayRef<int64_t> indices, const Batch* reuse = nullptr, at::Generator* generator = nullptr) const;
  // The samples `indices`, in that order, as a dataset of their own (tensor fields copied).
  TensorDataset select(c10::ArrayRef<int64_t> indices) const;

 private:
  Batch decodeBatch(c10::ArrayRef<int64_t> indices, at::Generator* generator) const;

  TensorDict fields_;
  std::shared_ptr<const ImageFiles> images_;
  std::shared_ptr<const SampleWeights> sampleWeights_;
  int64_t size_ = 0;
};

}  // namespace firebrand

#include "core/data/batch_sampler.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "core/errors.h"

namespace firebrand {
namespace {

// splitmix64: spreads (seed, epoch) over the generator's seed space so that
// neighbouring epochs do not get correlated streams.
uint64_t mixSeed(uint64_t seed, int64_t epoch) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<uint64_t>(epoch) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

int64_t batchCount(int64_t datasetSize, const SamplerOptions& options) {
  if (options.batchSize < 1) {
    throw InvalidArgument("batchSize must be a positive integer, got " + std::to_string(options.batchSize));
  }
  const int64_t count = options.dropLast ? datasetSize / options.batchSize
                                         : (datasetSize + options.batchSize - 1) / options.batchSize;
  if (count == 0) {
    throw InvalidArgument("dataset of " + std::to_string(datasetSize) + " samples gives no batch of " +
                          std::to_string(options.batchSize) + " with dropLast; lower batchSize or turn dropLast off");
  }
  return count;
}

BatchSampler::BatchSampler(int64_t datasetSize, const SamplerOptions& options, int64_t epoch)
    : batchSize_(options.batchSize), batchCount_(firebrand::batchCount(datasetSize, options)) {
  const auto longs = at::TensorOptions().dtype(at::kLong);
  if (options.shuffle) {
    at::Generator generator = at::detail::createCPUGenerator(mixSeed(options.seed, epoch));
    order_ = at::randperm(datasetSize, generator, longs);
  } else {
    order_ = at::arange(datasetSize, longs);
  }
}

int64_t BatchSampler::samplesIn(int64_t begin, int64_t end) const {
  const int64_t covered = std::min(order_.size(0), batchCount_ * batchSize_);
  return std::min(end * batchSize_, covered) - begin * batchSize_;
}

at::Tensor BatchSampler::indices(int64_t index) const {
  const int64_t start = index * batchSize_;
  return order_.narrow(0, start, std::min(batchSize_, order_.size(0) - start));
}

}  // namespace firebrand

#include "core/data/batch_sampler.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "core/errors.h"

namespace firebrand {

int64_t shardSize(int64_t datasetSize, const SamplerOptions& options) {
  if (options.worldSize < 1 || options.rank < 0 || options.rank >= options.worldSize) {
    throw InvalidArgument("sampler: rank " + std::to_string(options.rank) +
                          " must be in [0, worldSize) with worldSize " + std::to_string(options.worldSize) + " >= 1");
  }
  const int64_t epochSize = options.weights ? options.weights->numSamples : datasetSize;
  if (!options.evenShards) return (epochSize - options.rank + options.worldSize - 1) / options.worldSize;
  return (epochSize + options.worldSize - 1) / options.worldSize;
}

int64_t batchCount(int64_t datasetSize, const SamplerOptions& options) {
  if (options.batchSize < 1) {
    throw InvalidArgument("batchSize must be a positive integer, got " + std::to_string(options.batchSize));
  }
  const int64_t samples = shardSize(datasetSize, options);
  const int64_t count =
      options.dropLast ? samples / options.batchSize : (samples + options.batchSize - 1) / options.batchSize;
  if (count == 0) {
    throw InvalidArgument("dataset of " + std::to_string(samples) + " samples (per rank) gives no batch of " +
                          std::to_string(options.batchSize) + " with dropLast; lower batchSize or turn dropLast off");
  }
  return count;
}

BatchSampler::BatchSampler(int64_t datasetSize, const SamplerOptions& options, int64_t epoch)
    : batchSize_(options.batchSize), batchCount_(firebrand::batchCount(datasetSize, options)) {
  const auto longs = at::TensorOptions().dtype(at::kLong);
  at::Tensor order;
  at::Generator generator = at::detail::createCPUGenerator(options.seed + static_cast<uint64_t>(epoch));
  if (options.weights) {
    order =
        at::multinomial(options.weights->weights, options.weights->numSamples, options.weights->replacement, generator);
  } else if (options.shuffle) {
    order = at::randperm(datasetSize, generator, longs);
  } else {
    order = at::arange(datasetSize, longs);
  }
  const int64_t epochSize = order.size(0);
  if (options.worldSize > 1 && !options.evenShards) {
    order = order.slice(0, options.rank, epochSize, options.worldSize);
  } else if (options.worldSize > 1) {
    const int64_t total = shardSize(datasetSize, options) * options.worldSize;
    const int64_t copies = (total + epochSize - 1) / epochSize;
    order = order.repeat({copies}).narrow(0, 0, total).slice(0, options.rank, total, options.worldSize);
  }
  order = order.contiguous();
  order_.assign(order.data_ptr<int64_t>(), order.data_ptr<int64_t>() + order.numel());
}

c10::ArrayRef<int64_t> BatchSampler::indices(int64_t index) const {
  const auto start = static_cast<size_t>(index * batchSize_);
  return c10::ArrayRef<int64_t>(order_).slice(start, std::min(static_cast<size_t>(batchSize_), order_.size() - start));
}

}  // namespace firebrand

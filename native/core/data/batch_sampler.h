// The order of one epoch's batches: a pure function of (seed, epoch), so the
// same seed replays the same batches and a resumed run can pick up any epoch.
// Shuffling and sharding follow torch.utils.data.DistributedSampler exactly:
// randperm with a generator seeded seed + epoch; with several ranks the order
// is padded by repeating its start to a multiple of worldSize, and rank r
// takes every worldSize-th sample from position r. Without evenShards
// (evaluation) nothing is repeated: ranks get every sample once, some one less.
// With sample weights (a training dataset's), the epoch is
// torch.utils.data.WeightedRandomSampler's draw instead of a permutation:
// multinomial(weights, numSamples, replacement) with that generator, sharded
// the same way.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace firebrand {

// WeightedRandomSampler's arguments: a float64 weight per sample, the samples an epoch draws, and whether
// a sample may be drawn again.
struct SampleWeights {
  at::Tensor weights;
  int64_t numSamples = 0;
  bool replacement = true;
};

struct SamplerOptions {
  int64_t batchSize = 0;  // always given: config-schema.ts owns the default
  bool shuffle = true;
  bool dropLast = false;
  uint64_t seed = 0;
  int64_t rank = 0;
  int64_t worldSize = 1;
  bool evenShards = true;
  std::shared_ptr<const SampleWeights> weights;  // a training dataset's; replaces shuffling
};

// Samples one rank sees per epoch.
int64_t shardSize(int64_t datasetSize, const SamplerOptions& options);

// Batches an epoch of `datasetSize` samples makes (checks batchSize).
int64_t batchCount(int64_t datasetSize, const SamplerOptions& options);

class BatchSampler {
 public:
  BatchSampler(int64_t datasetSize, const SamplerOptions& options, int64_t epoch);

  int64_t batchCount() const { return batchCount_; }
  // Sample indices of batch `index` in [0, batchCount()), valid while the sampler lives.
  c10::ArrayRef<int64_t> indices(int64_t index) const;

 private:
  // Kept on the host: batches are cut from it without a tensor op.
  std::vector<int64_t> order_;
  int64_t batchSize_;
  int64_t batchCount_;
};

}  // namespace firebrand

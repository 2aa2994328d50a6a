// How one epoch runs: batching, order and how often it reports.
#pragma once
#include <cstdint>

#include "core/data/batch_sampler.h"
#include "core/options/option_value.h"

namespace firebrand {

struct EpochOptions {
  SamplerOptions sampler;
  int64_t epoch = 0;
  int64_t logEvery = 50;
  // Progress reports come at least this often between log steps (progress bars).
  double progressIntervalSeconds = 0.2;
};

// Reads { batchSize, shuffle, dropLast, seed, epoch, logEvery, progressIntervalMs }.
EpochOptions epochOptions(const OptionMap& options);

}  // namespace firebrand

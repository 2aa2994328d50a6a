// How one epoch runs: batching and order, the optimizer-step policy
// (accumulation, clipping, non-finite losses) and how often it reports.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/data/batch_sampler.h"
#include "core/data/loader_options.h"
#include "core/options/option_value.h"

namespace firebrand {

enum class NonFiniteLossPolicy {
  Error,  // stop with an error naming the step; the weights are not updated
  Skip,   // drop the step (no update), count it, go on
};

struct StepPolicy {
  // Micro-batches per optimizer step. An epoch's last group may be shorter;
  // each micro-batch's loss is weighted by its share of the group's samples,
  // so a group's gradient equals that of one batch of all its samples.
  int64_t gradientAccumulationSteps = 1;
  // Clip the global L2 norm of the gradients (torch.nn.utils.clip_grad_norm_).
  std::optional<double> maxGradNorm;
  // Clamp every gradient element to [-clipValue, clipValue] (clip_grad_value_).
  std::optional<double> clipValue;
  NonFiniteLossPolicy nonFiniteLoss = NonFiniteLossPolicy::Error;
};

struct EpochOptions {
  SamplerOptions sampler;
  LoaderOptions loader;
  StepPolicy step;
  int64_t epoch = 0;
  // Batches of the epoch to skip: a resumed run continues mid-epoch with the
  // batches it would have seen. Must start an accumulation group.
  int64_t startBatch = 0;
  // Carry on the running sums of the previous call (same epoch, paused for a
  // checkpoint) instead of starting them afresh.
  bool continueEpoch = false;
  // Pause after the optimizer step that reaches this global step (a checkpoint is due).
  std::optional<int64_t> stopAtGlobalStep;
  // Optimizer steps between log reports.
  int64_t logEvery = 50;
  // Progress reports come at least this often between log steps (progress bars).
  double progressIntervalSeconds = 0.2;
};

// Reads { batchSize, shuffle, dropLast, seed, rank, worldSize, epoch, startBatch,
// continueEpoch, stopAtGlobalStep,
// numWorkers, prefetchFactor, logEvery, progressIntervalMs,
// gradientAccumulationSteps, maxGradNorm, clipValue, nonFiniteLoss }.
// Errors name `owner` ("config", "loader options").
EpochOptions epochOptions(const OptionMap& options, const std::string& owner = "config");

}  // namespace firebrand

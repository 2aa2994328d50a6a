// How a fit runs, as TypeScript validated and defaulted it (src/training/
// config-schema.ts owns every rule and default): what stays the same over its
// epochs, given once to beginFit, and what each call of trainEpoch adds.
#pragma once
#include <cstdint>
#include <optional>

#include "core/data/batch_sampler.h"
#include "core/data/loader_options.h"

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

struct FitOptions {
  SamplerOptions sampler;
  LoaderOptions loader;
  StepPolicy step;
  // Optimizer steps between log reports.
  int64_t logEvery = 1;
  // Progress reports come at least this often between log steps (progress bars).
  double progressIntervalSeconds = 0;
};

// One call of trainEpoch: an epoch, or the part of it up to a pause.
struct EpochSegment {
  int64_t epoch = 0;
  // Batches of the epoch to skip: a resumed run continues mid-epoch with the
  // batches it would have seen. Must start an accumulation group.
  int64_t startBatch = 0;
  // Carry on the running sums of the previous call (same epoch, paused for a
  // checkpoint) instead of starting them afresh.
  bool continueEpoch = false;
  // Pause after the optimizer step that reaches this global step (a checkpoint is due).
  std::optional<int64_t> stopAtGlobalStep;
};

}  // namespace firebrand

// An epoch's running sums: losses and samples on the host, logged values of a
// custom step as tensors. They last across the calls of an epoch that pauses
// for a checkpoint and continues (EpochSegment::continueEpoch).
#pragma once
#include <cmath>
#include <cstdint>
#include <optional>

#include "core/tensor_dict.h"

namespace firebrand {

// One accumulation group's outcome, as all ranks agreed on it.
struct GroupOutcome {
  int64_t microBatches = 0;
  int64_t samples = 0;      // over the ranks
  double lossSum = 0;       // sample-weighted, over the ranks
  bool stepped = false;     // false: the optimizer step was skipped
  bool stopAgreed = false;  // some rank asked to stop
  // The gradients' L2 norm before clipping (only computed when maxGradNorm is set).
  std::optional<double> gradNorm;
};

struct EpochTotals {
  bool started = false;
  double lossSum = 0;  // over the samples of applied steps
  int64_t steppedSamples = 0;
  double logWindowLossSum = 0;  // since the last log report
  int64_t logWindowSamples = 0;
  TensorDict loggedSums;  // a custom step's other entries, sample-weighted
  int64_t samples = 0;
  int64_t steps = 0;  // micro-batches
  int64_t optimizerSteps = 0;
  int64_t skippedSteps = 0;
  double seconds = 0;

  void add(const GroupOutcome& group) {
    samples += group.samples;
    steps += group.microBatches;
    if (!group.stepped) {
      ++skippedSteps;
      return;
    }
    ++optimizerSteps;
    lossSum += group.lossSum;
    steppedSamples += group.samples;
    logWindowLossSum += group.lossSum;
    logWindowSamples += group.samples;
  }
  // The mean loss since the last log report (sample-weighted, so a window's
  // loss equals that of one batch of its samples); a log report starts a new window.
  double windowLoss(bool startNewWindow) {
    const double loss = logWindowSamples > 0 ? logWindowLossSum / static_cast<double>(logWindowSamples) : std::nan("");
    if (startNewWindow) {
      logWindowLossSum = 0;
      logWindowSamples = 0;
    }
    return loss;
  }
  // The epoch's loss, over the samples of the steps that were applied.
  double epochLoss() const { return steppedSamples > 0 ? lossSum / static_cast<double>(steppedSamples) : std::nan(""); }
};

}  // namespace firebrand

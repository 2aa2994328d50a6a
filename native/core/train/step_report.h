// What the training loop tells its caller while an epoch runs, and at its end.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/metrics/metric_set.h"

namespace firebrand {

struct StepReport {
  int64_t epoch = 0;                    // 0-based
  int64_t step = 0;                     // 1-based micro-batch within the epoch
  std::optional<int64_t> stepsInEpoch;  // micro-batches in the epoch, when the data says
  int64_t globalStep = 0;               // optimizer steps since the engine was made
  double loss = 0;                      // mean loss over the steps since the previous report
  double learningRate = 0;              // used by the latest optimizer step (group 0)
  double elapsedSeconds = 0;            // since the epoch began
  // Global L2 norm of the gradients before clipping, at the latest optimizer
  // step (only computed when maxGradNorm is set).
  std::optional<double> gradNorm;
  // The GradScaler's loss scale after the latest step (only when it is enabled).
  std::optional<double> gradScale;
  int64_t skippedSteps = 0;  // optimizer steps dropped for a non-finite loss, this epoch
  // Every optimizer's groups' learning rates for the next step, in order (LearningRateMonitor).
  std::vector<double> learningRates;
  bool isLogStep = false;  // an optimizer step that is a multiple of logEvery, or the epoch's last
};

using ReportSink = std::function<void(const StepReport&)>;

// Progress of an evaluation, a few times a second and at its end.
struct EvalReport {
  int64_t batch = 0;               // batches done
  std::optional<int64_t> batches;  // in all, when the data says
  int64_t samples = 0;
  double elapsedSeconds = 0;
};

using EvalReportSink = std::function<void(const EvalReport&)>;

// One micro-batch, seen by per-batch hooks: before it runs, and after (with
// its loss, and for training once its optimizer step, if any, is applied).
struct BatchEvent {
  enum class Phase { BeforeTrain, AfterTrain, BeforeEval, AfterEval };
  Phase phase = Phase::BeforeTrain;
  int64_t epoch = 0;
  int64_t batch = 0;           // 0-based within the epoch (or the evaluation)
  int64_t size = 0;            // samples
  int64_t globalStep = 0;      // optimizer steps so far
  std::optional<double> loss;  // After* only
};

// Called on the training thread, which waits for it: per-batch callbacks. A
// hook that fails throws, which ends the epoch (or evaluation) like any error.
using BatchHook = std::function<void(const BatchEvent&)>;

struct EpochResult {
  double loss = 0;  // mean over the epoch's samples
  MetricValues metrics;
  int64_t steps = 0;      // micro-batches run (over the epoch's calls, with continueEpoch)
  int64_t nextBatch = 0;  // the batch a paused epoch continues from
  int64_t optimizerSteps = 0;
  int64_t skippedSteps = 0;  // optimizer steps dropped for a non-finite loss
  int64_t samples = 0;
  double seconds = 0;
  double learningRate = 0;
  bool stopped = false;  // ended early by requestStop()
};

struct EvalResult {
  double loss = 0;
  MetricValues metrics;
  int64_t samples = 0;
  double seconds = 0;
};

// What an evaluation reports to, and whose per-batch hooks it calls.
struct EvalCallbacks {
  EvalReportSink report;
  BatchHook batchHook;
  int64_t epoch = 0;  // for the batch events
  double reportIntervalSeconds = 0.2;
  // Over the ranks' shards, loss and metrics summed (a collective), or over all the data on this rank alone.
  bool acrossRanks = true;
};

}  // namespace firebrand

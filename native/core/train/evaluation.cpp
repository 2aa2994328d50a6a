// TrainingEngine::evaluate: the model in eval mode, without gradients.
#include <ATen/ATen.h>
#include <torch/utils.h>

#include "core/data/dataset_loader.h"
#include "core/errors.h"
#include "core/model/eval_mode_scope.h"
#include "core/runtime/cpu_memory_cache.h"
#include "core/runtime/runtime_info.h"
#include "core/train/loop_support.h"
#include "core/train/training_engine.h"

namespace firebrand {

EvalResult TrainingEngine::evaluate(std::shared_ptr<const TensorDataset> dataset, const BatchTransforms& transforms,
                                    int64_t batchSize, const EvalCallbacks& callbacks) {
  SamplerOptions inOrder;
  inOrder.batchSize = batchSize;
  inOrder.shuffle = false;
  if (callbacks.acrossRanks) {
    if (ranks_->worldSize() > 1 && dataset->size() < ranks_->worldSize()) {
      throw InvalidArgument("evaluation data of " + std::to_string(dataset->size()) + " samples cannot be shared by " +
                            std::to_string(ranks_->worldSize()) + " ranks");
    }
    inOrder = ranks_->shard(inOrder, /*evenShards=*/false);
  }
  DatasetLoader loader(std::move(dataset), transforms, inOrder, 0, 0, loaderOptions(LoaderOptions{}));
  return evaluate(loader, callbacks);
}

namespace {

// The averaged weights in the model for as long as it lives (an evaluation), however it ends.
class AverageInModel {
 public:
  explicit AverageInModel(WeightAverage* average) : average_(average) {
    if (average_) average_->swapWithModel();
  }
  ~AverageInModel() {
    if (average_) average_->swapWithModel();
  }
  AverageInModel(const AverageInModel&) = delete;
  AverageInModel& operator=(const AverageInModel&) = delete;

 private:
  WeightAverage* average_;
};

// The per-batch hook, if any, told that `event`'s batch is at `phase` (with its loss once it ran).
void tellBatchHook(const BatchHook& hook, BatchEvent& event, BatchEvent::Phase phase, std::optional<double> loss) {
  if (!hook) return;
  event.phase = phase;
  event.loss = loss;
  hook(event);
}

}  // namespace

EvalResult TrainingEngine::evaluate(BatchStream& stream, const EvalCallbacks& callbacks) {
  const CpuMemoryCache::Scope reuseFreedBlocks;
  const StreamCloser closer(stream);
  const AverageInModel averaged(average_ && average_->options().evaluate ? average_.get() : nullptr);
  useRequestedThreads();
  const auto started = std::chrono::steady_clock::now();
  const auto accumulator = at::TensorOptions().dtype(at::kDouble).device(device_);
  at::Tensor lossSum = at::zeros({}, accumulator);
  MetricSet metrics = metrics_;
  metrics.reset(device_);
  TensorDict loggedSums;
  EvalResult result;
  int64_t index = 0;
  EvalReport progress;
  progress.batches = stream.batchCount();
  auto lastReport = started;
  const auto reportInterval = std::chrono::duration<double>(callbacks.reportIntervalSeconds);
  BatchEvent event;
  event.epoch = callbacks.epoch;
  try {
    std::optional<Batch> next = firstBatch(stream);
    torch::NoGradGuard noGrad;
    EvalModeScope evalMode(*model_);
    for (; next; ++index) {
      event.batch = index;
      event.size = next->size();
      event.globalStep = globalStep_;
      tellBatchHook(callbacks.batchHook, event, BatchEvent::Phase::BeforeEval, std::nullopt);
      const Batch batch = prepareBatch(std::move(*next));
      const StepValues step = runStep(batch, /*training=*/false);
      lossSum.add_(step.loss, batch.size());
      if (step.output.defined()) metrics.update(step.output, batch.targets());
      addLogged(loggedSums, step.logged, batch.size());
      result.samples += batch.size();
      if (callbacks.batchHook)
        tellBatchHook(callbacks.batchHook, event, BatchEvent::Phase::AfterEval, lossValue(step.loss));
      next = stream.next();
      const auto now = std::chrono::steady_clock::now();
      if (callbacks.report && (!next || now - lastReport >= reportInterval)) {
        progress.batch = index + 1;
        progress.samples = result.samples;
        progress.elapsedSeconds = secondsSince(started);
        lastReport = now;
        callbacks.report(progress);
      }
    }
  } catch (...) {
    rethrowWithContext("evaluation batch " + std::to_string(index + 1));
  }
  const std::vector<double> own{lossSum.item<double>(), static_cast<double>(result.samples)};
  const std::vector<double> sums =
      callbacks.acrossRanks
          ? ranks_->sumOverRanks(own,
                                 "the evaluation loss (evaluate is a collective: every rank calls it, or "
                                 "evaluate(data, { distributed: false }) evaluates on one rank alone)")
          : own;
  result.samples = static_cast<int64_t>(sums[1]);
  result.loss = sums[0] / static_cast<double>(result.samples);
  result.metrics = globalMetrics(metrics, loggedSums, result.loss, result.samples, callbacks.acrossRanks);
  result.seconds = secondsSince(started);
  return result;
}

}  // namespace firebrand

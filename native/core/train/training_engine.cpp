// The training loop: TrainingEngine's construction, the fit's plan and
// trainEpoch with the named steps it calls. The step itself is in
// train_step.cpp, batches' checks in batch_preparation.cpp.
#include "core/train/training_engine.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>

#include "core/data/dataset_loader.h"
#include "core/distributed/data_parallel.h"
#include "core/errors.h"
#include "core/runtime/cpu_memory_cache.h"
#include "core/runtime/malloc_settings.h"
#include "core/runtime/runtime_info.h"
#include "core/train/loop_support.h"

namespace firebrand {
namespace {

using Clock = std::chrono::steady_clock;

std::string stepContext(int64_t epoch, int64_t step) {
  return "epoch " + std::to_string(epoch + 1) + ", step " + std::to_string(step + 1);
}

bool classIndexLoss(const std::optional<LossFunction>& loss) { return loss && loss->takesClassIndices(); }

std::vector<std::string> withAccuracy(std::vector<std::string> metrics, bool classification) {
  if (classification && std::find(metrics.begin(), metrics.end(), "accuracy") == metrics.end()) {
    metrics.insert(metrics.begin(), "accuracy");
  }
  return metrics;
}

}  // namespace

TrainingEngine::TrainingEngine(std::shared_ptr<Model> model, std::optional<LossFunction> loss,
                               const std::vector<OptimizerUnitSpec>& optimizers, const SchedulerSpec& scheduler,
                               const std::vector<std::string>& metrics, const Precision& precision, c10::Device device)
    : model_(std::move(model)),
      loss_(std::move(loss)),
      metrics_(withAccuracy(metrics, classIndexLoss(loss_)), classIndexLoss(loss_),
               loss_ ? loss_->ignoreIndex() : -100),
      autocastDtype_(precision.autocastDtype),
      scaler_(precision.gradScaler),
      ranks_(std::make_unique<RankReducer>()),
      device_(device) {
  keepFreedMemoryForReuse();
  model_->moveTo(device_);
  if (loss_) loss_->to(device_);
  scaler_.to(device_);
  parameters_ = model_->parameters();
  parameterDtype_ = parameters_.empty() ? at::kFloat : parameters_.front().scalar_type();
  // Parameters frozen before training (config.freeze) stay out of the optimizers until unfrozen.
  torch::OrderedDict<std::string, at::Tensor> trainable;
  std::vector<std::string> frozen;
  for (const auto& item : model_->namedParameters()) {
    if (item.value().requires_grad()) {
      trainable.insert(item.key(), item.value());
    } else {
      frozen.push_back(item.key());
    }
  }
  refuseGroupsOfFrozenOnly(optimizers, trainable, frozen);
  units_ = makeOptimizerUnits(optimizers, trainable, scheduler);
  if (units_.size() > 1 && !model_->hasTrainingStep()) {
    throw InvalidArgument("optimizers: several optimizers need a model whose training_step returns their losses");
  }
}

TrainingEngine::~TrainingEngine() = default;

void TrainingEngine::onEvalMetric(double value) {
  for (auto& unit : units_) unit.onMetric(value);
}

void TrainingEngine::distribute(const DistributedOptions& options) {
  if (distributed_) throw InvalidState("distribute: this trainer already takes part in a distributed run");
  ranks_ = std::make_unique<DataParallel>(options, *model_, device_);
  distributed_ = true;
  if (const auto owned = ranks_->optimizerStateOwnership()) {
    for (auto& unit : units_) unit.shardState(owned);
  }
}

SamplerOptions TrainingEngine::rankSampler(const SamplerOptions& sampler) const {
  return ranks_->shard(sampler, /*evenShards=*/true);
}

TrainingEngine::FitPlan TrainingEngine::beginFit(const TensorDataset& data, const FitOptions& options,
                                                 int64_t numEpochs, std::optional<int64_t> maxSteps) {
  if (loss_ && loss_->balancesClasses()) loss_->balanceClasses(data.targets());
  return beginFit(batchCount(data.size(), rankSampler(data.trainingSampler(options.sampler))), options, numEpochs,
                  maxSteps, true);
}

TrainingEngine::FitPlan TrainingEngine::beginFit(std::optional<int64_t> batchesPerEpoch, const FitOptions& options,
                                                 int64_t numEpochs, std::optional<int64_t> maxSteps, bool fromDataset) {
  if (numEpochs < 1) throw InvalidArgument("numEpochs must be a positive integer, got " + std::to_string(numEpochs));
  if (!fromDataset && loss_ && loss_->balancesClasses()) {
    throw InvalidArgument("loss (" + loss_->name() +
                          "): weight 'balanced' counts the classes of a dataset's targets, and a stream has no end to "
                          "count to; give the weights as a list");
  }
  if (!loss_ && !model_->hasTrainingStep()) {
    throw InvalidArgument("loss: needed to train, since the model defines no training_step");
  }
  if (units_.empty()) {
    throw InvalidState(
        "fit: the trainer has no optimizer, so it was made to predict, evaluate and generate only; give it one "
        "(optimizer: 'adamw', or { name: 'adamw', lr: 1e-3 }) to train");
  }
  if (parameters_.empty()) {
    throw InvalidArgument("fit: the model has no parameters to train (it can still evaluate and predict)");
  }
  if (fineTuning_.adaptersMerged()) {
    throw InvalidState(
        "fit: the LoRA adapters were merged into the weights (mergeAdapter, for export); make a new trainer to train "
        "again");
  }
  FitPlan plan;
  plan.batchesPerEpoch = batchesPerEpoch;
  if (batchesPerEpoch) {
    const int64_t group = options.step.gradientAccumulationSteps;
    plan.optimizerStepsPerEpoch = (*batchesPerEpoch + group - 1) / group;
    plan.totalSteps = *plan.optimizerStepsPerEpoch * numEpochs;
    if (maxSteps) plan.totalSteps = std::min(*plan.totalSteps, *maxSteps);
  } else if (maxSteps) {
    plan.totalSteps = maxSteps;
  } else {
    for (const auto& unit : units_) {
      if (unit.scheduler().plansOverTotalSteps()) {
        throw InvalidArgument("lrScheduler (" + unit.scheduler().name() +
                              ") is planned over the run's optimizer steps, which streamed data does not tell; "
                              "give the stream's batchesPerEpoch");
      }
    }
  }
  for (auto& unit : units_) {
    unit.startSchedule(plan.totalSteps.value_or(0));
    unit.makeState();
  }
  learningRates_.applyRequested();
  fit_ = options;
  return plan;
}

EpochResult TrainingEngine::trainEpoch(std::shared_ptr<const TensorDataset> dataset, const BatchTransforms& transforms,
                                       const EpochSegment& segment, const ReportSink& report,
                                       const BatchHook& batchHook) {
  if (!fit_) throw InvalidState("trainEpoch: call beginFit first, to plan the learning-rate schedule");
  const SamplerOptions sampler = rankSampler(dataset->trainingSampler(fit_->sampler));
  DatasetLoader loader(std::move(dataset), transforms, sampler, segment.epoch, segment.startBatch,
                       loaderOptions(fit_->loader));
  return trainEpoch(loader, segment, report, batchHook);
}

EpochResult TrainingEngine::trainEpoch(BatchStream& stream, const EpochSegment& segment, const ReportSink& report,
                                       const BatchHook& batchHook) {
  const CpuMemoryCache::Scope reuseFreedBlocks;
  const StreamCloser closer(stream);
  EpochCursor cursor = beginEpoch(stream, segment);
  const auto pauseDue = [&] { return segment.stopAtGlobalStep && globalStep_ >= *segment.stopAtGlobalStep; };
  std::optional<Batch> pending;
  try {
    pending = firstBatch(stream);
  } catch (...) {
    rethrowWithContext(stepContext(segment.epoch, cursor.batch));
  }
  // Ranks stop together, at a step where any of them asked to; stops and
  // pauses take effect between optimizer steps, never inside a group.
  bool stop = ranks_->stopNow(/*agreedAtLastStep=*/false, stopRequested_);
  while (pending && !stop && !pauseDue()) {
    try {
      std::vector<Batch> group = gatherGroup(std::move(*pending), stream, cursor);
      const GroupOutcome outcome = trainGroup(std::move(group), cursor, batchHook);
      epochTotals_.add(outcome);
      if (threadTuner_) threadTuner_->afterStep();
      if (stepBoundary_) stepBoundary_();
      stop = ranks_->stopNow(outcome.stopAgreed, stopRequested_);
      // Fetched before the report, which must know whether this was the epoch's last step.
      pending = stop || pauseDue() ? std::nullopt : fetch(stream, cursor);
      // The epoch's last batch ends it, whether or not it pauses there.
      if (cursor.batches && cursor.batch >= *cursor.batches) cursor.exhausted = true;
      reportIfDue(outcome, /*lastOfSegment=*/!pending, cursor, report);
    } catch (...) {
      accumulating_ = false;
      partialGroup_.reset();  // a hook that threw
      zeroGrads();
      rethrowWithContext(stepContext(segment.epoch, cursor.batch));
    }
  }
  return endEpoch(cursor);
}

TrainingEngine::EpochCursor TrainingEngine::beginEpoch(const BatchStream& stream, const EpochSegment& segment) {
  if (!fit_) throw InvalidState("trainEpoch: call beginFit first, to plan the learning-rate schedule");
  useThreads();
  const int64_t groupSize = fit_->step.gradientAccumulationSteps;
  if (stream.firstBatch() % groupSize != 0) {
    throw InvalidArgument("startBatch " + std::to_string(stream.firstBatch()) +
                          " must start an accumulation group (a multiple of gradientAccumulationSteps " +
                          std::to_string(groupSize) + ")");
  }
  learningRates_.publish();
  model_->setTraining(true);
  zeroGrads();
  prefaultGradients();
  // Loss sums are kept on the host; metrics stay on the device until the epoch ends.
  if (!segment.continueEpoch || !epochTotals_.started) {
    epochTotals_ = EpochTotals{};
    epochTotals_.started = true;
    metrics_.reset(device_);
  }
  EpochCursor cursor;
  cursor.epoch = segment.epoch;
  cursor.batch = stream.firstBatch();
  cursor.batches = stream.batchCount();
  cursor.started = cursor.lastReport = Clock::now();
  return cursor;
}

std::optional<Batch> TrainingEngine::fetch(BatchStream& stream, EpochCursor& cursor) {
  std::optional<Batch> batch = stream.next();
  if (!batch) cursor.exhausted = true;
  return batch;
}

std::vector<Batch> TrainingEngine::gatherGroup(Batch first, BatchStream& stream, EpochCursor& cursor) {
  std::vector<Batch> group;
  group.push_back(std::move(first));
  while (static_cast<int64_t>(group.size()) < fit_->step.gradientAccumulationSteps) {
    std::optional<Batch> more = fetch(stream, cursor);
    if (!more) break;
    group.push_back(std::move(*more));
  }
  return group;
}

GroupOutcome TrainingEngine::trainGroup(std::vector<Batch> group, EpochCursor& cursor, const BatchHook& batchHook) {
  // Each micro-batch's loss weighs by its share of the group's counted targets, over all ranks, so that
  // accumulation equals one batch of them (transformers' num_items_in_batch); other losses by samples.
  const std::vector<double> weights = lossWeights(group);
  const bool counts = countsTargets();
  StepAgreement local;
  for (size_t i = 0; i < group.size(); ++i) {
    local.samples += group[i].size();
    local.lossWeight += weights[i];
  }
  // Gradients are averaged over ranks, so a rank's share of the global count is scaled by their number.
  const double share = counts ? static_cast<double>(ranks_->worldSize()) /
                                    ranks_->sumOverRanks({local.lossWeight}, "the counted targets")[0]
                              : 1.0 / local.lossWeight;
  GroupOutcome outcome;
  outcome.microBatches = static_cast<int64_t>(group.size());
  BatchEvent event;
  event.epoch = cursor.epoch;
  for (size_t i = 0; i < group.size(); ++i, ++cursor.batch) {
    accumulating_ = i + 1 < group.size();
    event.batch = cursor.batch;
    event.size = group[i].size();
    if (batchHook) callHook(batchHook, event, BatchEvent::Phase::BeforeTrain, i, group.size());
    const Batch batch = prepareBatch(std::move(group[i]));
    ranks_->beforeMicroBatch(i == 0, !accumulating_);
    // No counted target anywhere (0 / 0): the micro-batches' sums are 0, and so are their weights.
    const double weight = std::isfinite(share) ? weights[i] * share : 0.0;
    const double loss = trainMicroBatch(batch, weight, counts ? std::optional<double>(weights[i]) : std::nullopt);
    event.loss = loss;
    local.lossSum += loss * weights[i];
    if (!accumulating_) {
      ranks_->finishGradients();
      local.stop = stopRequested_;
      // From here the group's loss and samples are the global ones.
      const StepAgreement global = ranks_->agree(local);
      const double groupLoss = global.lossWeight > 0 ? global.lossSum / global.lossWeight : 0.0;
      outcome.samples = global.samples;
      outcome.lossSum = groupLoss * static_cast<double>(global.samples);
      outcome.stopAgreed = global.stop;
      // A rate set meanwhile (by a callback, even this batch's) applies from this step.
      learningRates_.applyRequested();
      outcome.stepped = optimizerStep(groupLoss, outcome.gradNorm);
    }
    if (batchHook) callHook(batchHook, event, BatchEvent::Phase::AfterTrain, accumulating_ ? i + 1 : 0, group.size());
  }
  return outcome;
}

void TrainingEngine::useThreads() {
  const int adaptive = adaptiveThreads();
  if (adaptive == 0) {
    threadTuner_.reset();
    useRequestedThreads();
    return;
  }
  if (!threadTuner_ || threadTuner_->maxThreads() != adaptive) threadTuner_.emplace(adaptive);
  threadTuner_->begin();
}

void TrainingEngine::requireStepBoundary(const std::string& operation) const {
  if (!partialGroup_) return;
  throw InvalidState(
      operation + ": called from a per-batch hook inside a gradient-accumulation group (" +
      std::to_string(partialGroup_->withGradients) + " of its " + std::to_string(partialGroup_->size) +
      " micro-batches have gathered gradients; its optimizer step has not run). It changes what trains, "
      "so call it at a step boundary: preTrainBatch of a group's first micro-batch, postTrainBatch of its "
      "last, or an epoch hook");
}

void TrainingEngine::callHook(const BatchHook& batchHook, BatchEvent& event, BatchEvent::Phase phase,
                              size_t withGradients, size_t groupSize) {
  event.phase = phase;
  event.globalStep = globalStep_;
  if (phase == BatchEvent::Phase::BeforeTrain) event.loss.reset();
  learningRates_.publish();
  if (withGradients > 0)
    partialGroup_ = GroupPosition{static_cast<int64_t>(withGradients), static_cast<int64_t>(groupSize)};
  batchHook(event);
  partialGroup_.reset();
}

void TrainingEngine::reportIfDue(const GroupOutcome& group, bool lastOfSegment, EpochCursor& cursor,
                                 const ReportSink& report) {
  const bool isLogStep = (group.stepped && globalStep_ % fit_->logEvery == 0) || lastOfSegment;
  const auto now = Clock::now();
  if (!isLogStep && now - cursor.lastReport < std::chrono::duration<double>(fit_->progressIntervalSeconds)) return;
  StepReport stepReport;
  stepReport.epoch = cursor.epoch;
  stepReport.step = cursor.batch;
  stepReport.stepsInEpoch = cursor.batches;
  stepReport.globalStep = globalStep_;
  stepReport.loss = epochTotals_.windowLoss(/*startNewWindow=*/isLogStep);
  stepReport.learningRate = units_.front().lastStepLr();
  stepReport.elapsedSeconds = epochTotals_.seconds + secondsSince(cursor.started);
  stepReport.gradNorm = group.gradNorm;
  if (scaler_.enabled()) stepReport.gradScale = scaler_.currentScale();
  stepReport.skippedSteps = epochTotals_.skippedSteps;
  stepReport.learningRates = learningRates_.current();
  learningRates_.publish(stepReport.learningRates);
  stepReport.isLogStep = isLogStep;
  cursor.lastReport = now;
  report(stepReport);
}

EpochResult TrainingEngine::endEpoch(const EpochCursor& cursor) {
  accumulating_ = false;
  EpochTotals& totals = epochTotals_;
  totals.seconds += secondsSince(cursor.started);
  EpochResult result;
  result.nextBatch = cursor.batch;
  result.steps = totals.steps;
  result.optimizerSteps = totals.optimizerSteps;
  result.skippedSteps = totals.skippedSteps;
  result.samples = totals.samples;
  result.stopped = !cursor.exhausted;
  result.seconds = totals.seconds;
  result.learningRate = units_.front().lastStepLr();
  result.loss = totals.epochLoss();
  result.metrics = globalMetrics(metrics_, totals.loggedSums, result.loss, totals.samples);
  return result;
}

MetricValues TrainingEngine::globalMetrics(const MetricSet& metrics, const TensorDict& loggedSums, double loss,
                                           int64_t samples, bool acrossRanks) {
  // Summed over the ranks in copies, since the running sums go on if the epoch
  // continues after a pause; with one rank (or this rank alone) there is nothing to sum.
  const bool summed = acrossRanks && ranks_->worldSize() > 1;
  MetricSet global = summed ? metrics.snapshot() : metrics;
  TensorDict logged;
  for (const auto& [name, sum] : loggedSums) logged.emplace(name, summed ? sum.clone() : sum);
  std::vector<at::Tensor> sums = global.runningSums();
  for (const auto& entry : logged) sums.push_back(entry.second);
  if (summed) ranks_->sumInPlace(sums, "the metrics");
  MetricValues values = global.compute(loss);
  if (samples > 0) putMeans(values, logged, samples);
  return values;
}

}  // namespace firebrand

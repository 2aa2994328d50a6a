#include "core/train/training_engine.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/nn/utils.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/compat/torch_compat.h"
#include "core/data/dataset_loader.h"
#include "core/distributed/data_parallel.h"
#include "core/inference/prediction.h"
#include "core/model/eval_mode_scope.h"
#include "core/errors.h"
#include "core/runtime/malloc_settings.h"
#include "core/runtime/runtime_info.h"
#include "core/train/mixed_precision.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Tells a stream its consumer is done, however the epoch ends.
class StreamCloser {
 public:
  explicit StreamCloser(BatchStream& stream) : stream_(stream) {}
  ~StreamCloser() { stream_.close(); }

 private:
  BatchStream& stream_;
};

std::string stepContext(int64_t epoch, int64_t step) {
  return "epoch " + std::to_string(epoch + 1) + ", step " + std::to_string(step + 1);
}

// A loss as a number. A float scalar on the CPU is read from its memory:
// item() takes four dispatches, which show on a small model's step.
double lossValue(const at::Tensor& loss) {
  if (loss.device().is_cpu() && loss.numel() == 1 && !loss.is_neg()) {
    if (loss.scalar_type() == at::kFloat) return *loss.data_ptr<float>();
    if (loss.scalar_type() == at::kDouble) return *loss.data_ptr<double>();
  }
  return loss.item<double>();
}

bool classIndexLoss(const std::optional<LossFunction>& loss) { return loss && loss->takesClassIndices(); }

std::vector<std::string> withAccuracy(std::vector<std::string> metrics, bool classification) {
  if (classification && std::find(metrics.begin(), metrics.end(), "accuracy") == metrics.end()) {
    metrics.insert(metrics.begin(), "accuracy");
  }
  return metrics;
}

// Running sums of a custom step's logged values, weighted by batch size.
void addLogged(TensorDict& sums, const TensorDict& logged, int64_t batchSize) {
  for (const auto& [name, value] : logged) {
    if (value.numel() != 1) {
      throw InvalidArgument("the step's entry '" + name + "' must be a scalar tensor to be logged, got shape " +
                            shapeText(value));
    }
    const at::Tensor weighted = value.reshape({}).to(at::kDouble) * static_cast<double>(batchSize);
    auto it = sums.find(name);
    if (it == sums.end()) {
      sums.emplace(name, weighted);
    } else {
      it->second.add_(weighted);
    }
  }
}

void putMeans(MetricValues& metrics, const TensorDict& sums, int64_t samples) {
  for (const auto& [name, sum] : sums) metrics.scalars[name] = sum.item<double>() / static_cast<double>(samples);
}

}  // namespace

TrainingEngine::TrainingEngine(std::shared_ptr<Model> model, std::optional<LossFunction> loss,
                               const std::vector<OptimizerUnitSpec>& optimizers, const SchedulerSpec& scheduler,
                               const std::vector<std::string>& metrics, const Precision& precision,
                               c10::Device device)
    : model_(std::move(model)),
      loss_(std::move(loss)),
      metrics_(withAccuracy(metrics, classIndexLoss(loss_)), classIndexLoss(loss_), loss_ ? loss_->ignoreIndex() : -100),
      autocastDtype_(precision.autocastDtype),
      scaler_(precision.gradScaler),
      device_(device) {
  keepFreedMemoryForReuse();
  if (!loss_ && !model_->hasTrainingStep()) {
    throw InvalidArgument("loss: needed, since the model defines no training_step");
  }
  model_->moveTo(device_);
  if (loss_) loss_->to(device_);
  scaler_.to(device_);
  parameters_ = model_->parameters();
  parameterDtype_ = parameters_.empty() ? at::kFloat : parameters_.front().scalar_type();
  units_ = makeOptimizerUnits(optimizers, model_->namedParameters(), scheduler);
  if (units_.size() > 1 && !model_->hasTrainingStep()) {
    throw InvalidArgument("optimizers: several optimizers need a model whose training_step returns their losses");
  }
}

TrainingEngine::~TrainingEngine() = default;

void TrainingEngine::distribute(const DistributedOptions& options) {
  if (dataParallel_) throw InvalidState("distribute: this trainer already takes part in a distributed run");
  dataParallel_ = std::make_unique<DataParallel>(options, *model_, device_);
}

SamplerOptions TrainingEngine::rankSampler(const SamplerOptions& sampler) const {
  return dataParallel_ ? dataParallel_->shard(sampler, /*evenShards=*/true) : sampler;
}

TrainingEngine::AgreedStep TrainingEngine::agreeOnStep(double& groupLossSum, int64_t groupSamples) {
  const std::vector<double> sums = dataParallel_->sumOverRanks(
      {groupLossSum, static_cast<double>(groupSamples), stopRequested_ ? 1.0 : 0.0}, "the step's loss");
  groupLossSum = sums[0];
  return {static_cast<int64_t>(sums[1]), sums[2] > 0};
}

void TrainingEngine::sumOverRanks(MetricSet& metrics, TensorDict& loggedSums) {
  std::vector<at::Tensor> sums = metrics.runningSums();
  for (const auto& entry : loggedSums) sums.push_back(entry.second);
  dataParallel_->sumInPlace(sums, "the metrics");
}

TrainingEngine::FitPlan TrainingEngine::beginFit(std::optional<int64_t> batchesPerEpoch, const EpochOptions& options,
                                                 int64_t numEpochs, std::optional<int64_t> maxSteps) {
  if (numEpochs < 1) throw InvalidArgument("numEpochs must be a positive integer, got " + std::to_string(numEpochs));
  if (parameters_.empty()) {
    throw InvalidArgument("fit: the model has no parameters to train (it can still evaluate and predict)");
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
  for (auto& unit : units_) unit.startSchedule(plan.totalSteps.value_or(0));
  applyRequestedLearningRates();
  fitBegun_ = true;
  return plan;
}

void TrainingEngine::setLearningRate(double lr, const std::string& optimizerName) {
  if (!std::isfinite(lr) || lr < 0) {
    throw InvalidArgument("setLearningRate: lr must be a finite number >= 0, got " + std::to_string(lr));
  }
  if (!optimizerName.empty()) {
    const bool known = std::any_of(units_.begin(), units_.end(), [&](const auto& unit) { return unit.name() == optimizerName; });
    if (!known) throw InvalidArgument("setLearningRate: no optimizer is named '" + optimizerName + "'");
  }
  const std::lock_guard<std::mutex> lock(requestedLrMutex_);
  requestedLrs_.emplace_back(optimizerName, lr);
  lrRequested_ = true;
}

void TrainingEngine::applyRequestedLearningRates() {
  if (!lrRequested_) return;
  std::vector<std::pair<std::string, double>> requests;
  {
    const std::lock_guard<std::mutex> lock(requestedLrMutex_);
    requests.swap(requestedLrs_);
    lrRequested_ = false;
  }
  for (const auto& [name, lr] : requests) {
    for (auto& unit : units_) {
      if (name.empty() || unit.name() == name) unit.setBaseLearningRate(lr);
    }
  }
}

std::vector<std::string> TrainingEngine::learningRateNames() const {
  std::vector<std::string> names;
  for (const auto& unit : units_) {
    const auto unitNames = unit.learningRateNames();
    names.insert(names.end(), unitNames.begin(), unitNames.end());
  }
  return names;
}

void TrainingEngine::publishLearningRates(std::vector<double> rates) {
  const std::lock_guard<std::mutex> lock(publishedLrMutex_);
  publishedLrs_ = std::move(rates);
}

std::vector<double> TrainingEngine::publishedLearningRates() const {
  const std::lock_guard<std::mutex> lock(publishedLrMutex_);
  return publishedLrs_;
}

std::vector<double> TrainingEngine::learningRates() const {
  std::vector<double> rates;
  for (const auto& unit : units_) {
    const auto unitRates = unit.learningRates();
    rates.insert(rates.end(), unitRates.begin(), unitRates.end());
  }
  return rates;
}

void TrainingEngine::onEvalMetric(double value) {
  for (auto& unit : units_) unit.onMetric(value);
}

void TrainingEngine::zeroGrads() {
  for (auto& unit : units_) unit.zeroGrad();
}

TensorDict TrainingEngine::stateDict() const {
  TensorDict state;
  for (const auto& named : {model_->namedParameters(), model_->namedBuffers()}) {
    for (const auto& item : named) state[item.key()] = item.value().detach().to(at::kCPU, false, /*copy=*/true);
  }
  return state;
}

void TrainingEngine::exportTorchScript(const std::string& path) {
  EvalModeScope evalMode(*model_);
  model_->saveTorchScript(path);
}

at::Tensor TrainingEngine::inputsToDevice(const at::Tensor& inputs) const {
  // Floating inputs follow the model's dtype (Float64Array data into a float32
  // model); integer inputs (token ids) are left as they are.
  // Checked here: .to() returns a tensor that already fits too, but after a dispatch per step.
  const bool convert = inputs.is_floating_point() && inputs.scalar_type() != parameterDtype_;
  if (inputs.device() == device_ && !convert) return inputs;
  if (inputs.is_floating_point()) return inputs.to(device_, parameterDtype_, /*non_blocking=*/true);
  return inputs.to(device_, /*non_blocking=*/true);
}

Batch TrainingEngine::prepareBatch(Batch batch) const {
  for (auto& [name, tensor] : batch.fields) {
    if (checkFiniteInputs_ && tensor.is_floating_point() && tensor.numel() > 0) {
      const at::Tensor bad = at::logical_not(at::isfinite(tensor)).reshape({tensor.size(0), -1}).any(1);
      if (bad.any().item<bool>()) {
        const int64_t sample = bad.nonzero()[0][0].item<int64_t>();
        const std::string where = sample < static_cast<int64_t>(batch.sampleIndices.size())
                                      ? "in dataset sample " + std::to_string(batch.sampleIndices[sample])
                                      : "at position " + std::to_string(sample) + " of the batch";
        throw NonFiniteValue("field '" + name + "' holds NaN or Inf " + where + " (checkFiniteInputs)");
      }
    }
    if (name == kInputField) {
      tensor = inputsToDevice(tensor);
      continue;
    }
    if (name == kTargetField && loss_) {
      tensor = loss_->prepareTargets(tensor);
      // On the CPU, before the copy: an out-of-range label on CUDA is a device-side assert.
      if (classCount_) loss_->checkLabelRange(tensor, *classCount_, batch.sampleIndices);
    }
    if (tensor.device() != device_) tensor = tensor.to(device_, /*non_blocking=*/true);
  }
  return batch;
}

LoaderOptions TrainingEngine::loaderOptions(LoaderOptions options) const {
  options.pinMemory = device_.is_cuda();
  return options;
}

const LossFunction& TrainingEngine::lossFunction(const char* purpose) const {
  if (!loss_) throw InvalidArgument(std::string("loss: needed to ") + purpose);
  return *loss_;
}

void TrainingEngine::checkBatchFits(const Batch& batch) {
  // A model's own steps check their batches themselves.
  if (!loss_ || model_->hasTrainingStep()) return;
  torch::NoGradGuard noGrad;
  EvalModeScope evalMode(*model_);
  Batch sample;
  for (const auto& [name, tensor] : batch.fields) sample.fields.emplace(name, tensor.narrow(0, 0, 1));
  sample = prepareBatch(std::move(sample));
  at::Tensor output;
  try {
    output = model_->forward(sample.inputs());
  } catch (const ShapeMismatch& error) {
    throw ShapeMismatch("dataset samples of shape " + shapeText(batch.inputs().sizes().slice(1)) +
                        " do not fit the model: " + error.what());
  }
  if (loss_->takesClassIndices() && output.dim() >= 2) {
    classCount_ = output.size(1);
    loss_->checkLabelRange(sample.targets().cpu(), *classCount_,
                           batch.sampleIndices.empty() ? batch.sampleIndices : batch.sampleIndices.slice(0, 1));
  }
  try {
    (*loss_)(output, sample.targets());
  } catch (const ShapeMismatch& error) {
    throw ShapeMismatch("dataset targets of shape " + shapeText(batch.targets().sizes().slice(1)) +
                        " per sample do not fit the model's output of shape " + shapeText(output.sizes().slice(1)) +
                        " per sample: " + error.what());
  }
}

Batch TrainingEngine::firstBatch(BatchStream& stream) {
  std::optional<Batch> first = stream.next();
  if (!first) throw InvalidArgument("the data gave no batches");
  classCount_.reset();
  checkBatchFits(*first);
  return std::move(*first);
}

TrainingEngine::StepValues TrainingEngine::runStep(const Batch& batch, bool training) {
  AutocastScope autocast(device_.type(), autocastDtype_);
  const bool custom = training ? model_->hasTrainingStep() : model_->hasValidationStep();
  if (!custom) {
    const LossFunction& loss = lossFunction(training ? "train" : "evaluate (or define validation_step)");
    StepValues values;
    values.output = model_->forward(batch.inputs());
    values.loss = loss(values.output, batch.targets());
    return values;
  }
  TensorDict logged = training ? model_->trainingStep(batch.fields) : model_->validationStep(batch.fields);
  const char* method = training ? "training_step" : "validation_step";
  const auto scalarEntry = [&](const std::string& key) {
    const auto it = logged.find(key);
    if (it == logged.end() || it->second.numel() != 1) {
      std::string keys;
      for (const auto& entry : logged) keys += (keys.empty() ? "" : ", ") + entry.first;
      throw InvalidArgument(std::string(method) + " must return a Dict[str, Tensor] with a scalar '" + key +
                            "'; it returned {" + keys + "}");
    }
    return it->second.reshape({});
  };
  StepValues values;
  if (training && units_.size() > 1) {
    // Several optimizers: each steps on its own loss; "loss" reports their sum.
    for (const auto& unit : units_) values.unitLosses.push_back(scalarEntry(unit.lossKey()));
    values.loss = at::stack(values.unitLosses).sum();
  } else {
    values.loss = scalarEntry("loss");
    logged.erase("loss");
  }
  values.logged = std::move(logged);
  return values;
}

TrainingEngine::StepValues TrainingEngine::forwardBackward(const Batch& batch, double lossWeight) {
  StepValues values = runStep(batch, /*training=*/true);
  const auto weighted = [&](const at::Tensor& loss) { return scaler_.scale(lossWeight == 1.0 ? loss : loss * lossWeight); };
  if (values.unitLosses.empty()) {
    // DDP's bucket all-reduce hooks will fire during this backward.
    weighted(values.loss).backward();
  } else {
    // Each optimizer's parameters get the gradient of its own loss only (a generator's
    // loss must not move the discriminator), added to what accumulation gathered.
    for (size_t i = 0; i < units_.size(); ++i) {
      const auto& parameters = units_[i].parameters();
      const auto grads = torch::autograd::grad({weighted(values.unitLosses[i])}, parameters, {},
                                               /*retain_graph=*/i + 1 < units_.size(), /*create_graph=*/false,
                                               /*allow_unused=*/true);
      for (size_t p = 0; p < parameters.size(); ++p) {
        if (!grads[p].defined()) continue;
        at::Tensor& grad = const_cast<at::Tensor&>(parameters[p]).mutable_grad();
        grad = grad.defined() ? grad + grads[p] : grads[p];
      }
    }
  }
  // Not detached (a dispatcher call and a tensor each, per step): the values are
  // only read as numbers or summed under no-grad, and the graph ends with the step.
  values.unitLosses.clear();
  return values;
}

bool TrainingEngine::optimizerStep(double groupLoss, const StepPolicy& policy, std::optional<double>& gradNorm) {
  // Gradients are all-reduced before this point.
  const bool lossFinite = std::isfinite(groupLoss);
  const auto& parameters = parameters_;
  gradNorm.reset();
  at::Tensor foundInf;
  if (scaler_.enabled() && lossFinite) {
    // Overflowing fp16 gradients are the scaler's business: skip, back off, go on.
    foundInf = scaler_.unscale(parameters);
    if (foundInf.item<float>() > 0) {
      zeroGrads();
      scaler_.update(foundInf);
      return false;
    }
  }
  if (lossFinite && policy.maxGradNorm) {
    gradNorm = torch::nn::utils::clip_grad_norm_(parameters, *policy.maxGradNorm);
  }
  const bool normFinite = !gradNorm || std::isfinite(*gradNorm);
  if (!lossFinite || !normFinite) {
    const std::string what = lossFinite ? "non-finite gradient norm (" + std::to_string(*gradNorm) + ")"
                                        : "non-finite loss (" + std::to_string(groupLoss) + ")";
    zeroGrads();
    if (policy.nonFiniteLoss == NonFiniteLossPolicy::Error) {
      throw NonFiniteValue(what + " at global step " + std::to_string(globalStep_ + 1) +
                           "; the weights were not updated. Set nonFiniteLoss: 'skip' to drop such steps");
    }
    return false;
  }
  if (policy.clipValue) torch::nn::utils::clip_grad_value_(parameters, *policy.clipValue);
  for (auto& unit : units_) unit.step();
  if (foundInf.defined()) scaler_.update(foundInf);
  zeroGrads();
  ++globalStep_;
  return true;
}

EpochResult TrainingEngine::trainEpoch(std::shared_ptr<const TensorDataset> dataset,
                                       const BatchTransforms& transforms, const EpochOptions& options,
                                       const ReportSink& report, const BatchHook& batchHook) {
  DatasetLoader loader(std::move(dataset), transforms, rankSampler(options.sampler), options.epoch,
                       options.startBatch, loaderOptions(options.loader));
  return trainEpoch(loader, options, report, batchHook);
}

EpochResult TrainingEngine::trainEpoch(BatchStream& stream, const EpochOptions& options, const ReportSink& report,
                                       const BatchHook& batchHook) {
  const StreamCloser closer(stream);
  if (!fitBegun_) throw InvalidState("trainEpoch: call beginFit first, to plan the learning-rate schedule");
  useRequestedThreads();
  const int64_t groupSize = options.step.gradientAccumulationSteps;
  if (stream.firstBatch() % groupSize != 0) {
    throw InvalidArgument("startBatch " + std::to_string(stream.firstBatch()) +
                          " must start an accumulation group (a multiple of gradientAccumulationSteps " +
                          std::to_string(groupSize) + ")");
  }
  const std::optional<int64_t> batches = stream.batchCount();
  publishLearningRates(learningRates());
  model_->setTraining(true);
  zeroGrads();

  // Loss sums are kept on the host; metrics stay on the device until the epoch ends.
  EpochTotals& totals = epochTotals_;
  if (!options.continueEpoch || !totals.started) {
    totals = EpochTotals{};
    totals.started = true;
    metrics_.reset(device_);
  }
  double groupLossSum = 0;
  std::optional<double> gradNorm;
  const auto pauseDue = [&] { return options.stopAtGlobalStep && globalStep_ >= *options.stopAtGlobalStep; };
  // Ranks stop together, at the step where any of them asked to (agreeOnStep).
  bool stopAgreed = false;
  const auto stopDue = [&] { return dataParallel_ ? stopAgreed : stopRequested_.load(); };

  const auto started = Clock::now();
  auto lastReport = started;
  const auto progressInterval = std::chrono::duration<double>(options.progressIntervalSeconds);

  EpochResult result;
  int64_t batchIndex = stream.firstBatch();
  std::optional<Batch> pending;
  bool exhausted = false;  // the stream has no more batches
  const auto fetch = [&] {
    std::optional<Batch> batch = stream.next();
    exhausted = !batch;
    return batch;
  };
  try {
    pending = firstBatch(stream);
  } catch (...) {
    rethrowWithContext(stepContext(options.epoch, batchIndex));
  }
  // A stop takes effect between optimizer steps, never inside a group.
  while (pending && !stopDue() && !pauseDue()) {
    try {
      // An accumulation group's batches are gathered first: each micro-batch's
      // loss is weighted by its share of the group's samples.
      std::vector<Batch> group;
      group.push_back(std::move(*pending));
      pending.reset();
      while (static_cast<int64_t>(group.size()) < groupSize) {
        std::optional<Batch> more = fetch();
        if (!more) break;
        group.push_back(std::move(*more));
      }
      int64_t groupSamples = 0;
      for (const auto& batch : group) groupSamples += batch.size();
      groupLossSum = 0;
      bool stepped = false;
      BatchEvent event;
      event.epoch = options.epoch;
      for (size_t i = 0; i < group.size(); ++i, ++batchIndex) {
        accumulating_ = i + 1 < group.size();
        event.batch = batchIndex;
        event.size = group[i].size();
        if (batchHook) {
          event.phase = BatchEvent::Phase::BeforeTrain;
          event.globalStep = globalStep_;
          event.loss.reset();
          publishLearningRates(learningRates());
          batchHook(event);
        }
        const Batch batch = prepareBatch(std::move(group[i]));
        const int64_t batchSize = batch.size();
        if (dataParallel_) dataParallel_->beforeMicroBatch(i == 0, !accumulating_);
        const StepValues step =
            forwardBackward(batch, static_cast<double>(batchSize) / static_cast<double>(groupSamples));
        // Read back every micro-batch: the step's finite check needs it anyway, and host
        // sums cost no tensor ops (which dominate small models' steps).
        const double loss = lossValue(step.loss);
        if (batchHook) event.loss = loss;
        groupLossSum += loss * static_cast<double>(batchSize);
        {
          torch::NoGradGuard noGrad;  // the step's values still carry its graph
          if (step.output.defined()) metrics_.update(step.output, batch.targets());
          addLogged(totals.loggedSums, step.logged, batchSize);
        }
        totals.samples += batchSize;
        ++totals.steps;
        if (!accumulating_ && dataParallel_) {
          dataParallel_->finishGradients();
          const AgreedStep agreed = agreeOnStep(groupLossSum, groupSamples);
          // From here the group's loss and samples are the global ones.
          totals.samples += agreed.samples - groupSamples;
          groupSamples = agreed.samples;
          stopAgreed = agreed.stop;
        }
        if (!accumulating_) {
          // A rate set meanwhile (by a callback, even this batch's) applies from this step.
          applyRequestedLearningRates();
          stepped = optimizerStep(groupLossSum / static_cast<double>(groupSamples), options.step, gradNorm);
          if (stepped) {
            ++totals.optimizerSteps;
            totals.lossSum += groupLossSum;
            totals.steppedSamples += groupSamples;
            totals.logWindowLossSum += groupLossSum;
            totals.logWindowSamples += groupSamples;
          } else {
            ++totals.skippedSteps;
          }
        }
        if (batchHook) {
          event.phase = BatchEvent::Phase::AfterTrain;
          event.globalStep = globalStep_;
          publishLearningRates(learningRates());
          batchHook(event);
        }
      }
      if (stepBoundary_) stepBoundary_();
      // The next group's first batch is fetched (prefetched, with a loader) before
      // the report, which must know whether this was the epoch's last step.
      if (!stopDue() && !pauseDue()) pending = fetch();
      // The epoch's last batch ends it, whether or not it pauses there.
      if (batches && batchIndex >= *batches) exhausted = true;
      const bool isLogStep = (stepped && globalStep_ % options.logEvery == 0) || !pending;
      const auto now = Clock::now();
      if (isLogStep || now - lastReport >= progressInterval) {
        StepReport stepReport;
        stepReport.epoch = options.epoch;
        stepReport.step = batchIndex;
        stepReport.stepsInEpoch = batches;
        stepReport.globalStep = globalStep_;
        // Sample-weighted, so a window's loss equals that of one batch of its samples.
        stepReport.loss = totals.logWindowSamples > 0
                              ? totals.logWindowLossSum / static_cast<double>(totals.logWindowSamples)
                              : std::nan("");
        stepReport.learningRate = units_.front().lastStepLr();
        stepReport.elapsedSeconds = totals.seconds + secondsSince(started);
        stepReport.gradNorm = gradNorm;
        if (scaler_.enabled()) stepReport.gradScale = scaler_.currentScale();
        stepReport.skippedSteps = totals.skippedSteps;
        stepReport.learningRates = learningRates();
        publishLearningRates(stepReport.learningRates);
        stepReport.isLogStep = isLogStep;
        if (isLogStep) {
          totals.logWindowLossSum = 0;
          totals.logWindowSamples = 0;
        }
        lastReport = now;
        report(stepReport);
      }
    } catch (...) {
      accumulating_ = false;
      zeroGrads();
      rethrowWithContext(stepContext(options.epoch, batchIndex));
    }
  }
  accumulating_ = false;
  totals.seconds += secondsSince(started);
  result.nextBatch = batchIndex;
  result.steps = totals.steps;
  result.optimizerSteps = totals.optimizerSteps;
  result.skippedSteps = totals.skippedSteps;
  result.samples = totals.samples;
  result.stopped = !exhausted;
  result.seconds = totals.seconds;
  result.learningRate = units_.front().lastStepLr();
  // The epoch's loss is over the samples of the steps that were applied.
  result.loss = totals.steppedSamples > 0 ? totals.lossSum / static_cast<double>(totals.steppedSamples)
                                          : std::nan("");
  if (dataParallel_) {
    // Copies: the running sums go on if the epoch continues after a pause.
    MetricSet global = metrics_.snapshot();
    TensorDict loggedSums;
    for (const auto& [name, sum] : totals.loggedSums) loggedSums.emplace(name, sum.clone());
    sumOverRanks(global, loggedSums);
    result.metrics = global.compute(result.loss);
    if (totals.samples > 0) putMeans(result.metrics, loggedSums, totals.samples);
    return result;
  }
  result.metrics = metrics_.compute(result.loss);
  if (totals.samples > 0) putMeans(result.metrics, totals.loggedSums, totals.samples);
  return result;
}

EvalResult TrainingEngine::evaluate(std::shared_ptr<const TensorDataset> dataset, const BatchTransforms& transforms,
                                    int64_t batchSize, const EvalCallbacks& callbacks) {
  SamplerOptions inOrder;
  inOrder.batchSize = batchSize;
  inOrder.shuffle = false;
  if (dataParallel_) {
    if (dataset->size() < dataParallel_->worldSize()) {
      throw InvalidArgument("evaluation data of " + std::to_string(dataset->size()) +
                            " samples cannot be shared by " + std::to_string(dataParallel_->worldSize()) + " ranks");
    }
    inOrder = dataParallel_->shard(inOrder, /*evenShards=*/false);
  }
  DatasetLoader loader(std::move(dataset), transforms, inOrder, 0, 0, loaderOptions(LoaderOptions{}));
  return evaluate(loader, callbacks);
}

EvalResult TrainingEngine::evaluate(BatchStream& stream, const EvalCallbacks& callbacks) {
  const StreamCloser closer(stream);
  useRequestedThreads();
  const auto started = Clock::now();
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
      if (callbacks.batchHook) {
        event.phase = BatchEvent::Phase::BeforeEval;
        event.loss.reset();
        callbacks.batchHook(event);
      }
      const Batch batch = prepareBatch(std::move(*next));
      const StepValues step = runStep(batch, /*training=*/false);
      lossSum.add_(step.loss, batch.size());
      if (step.output.defined()) metrics.update(step.output, batch.targets());
      addLogged(loggedSums, step.logged, batch.size());
      result.samples += batch.size();
      if (callbacks.batchHook) {
        event.phase = BatchEvent::Phase::AfterEval;
        event.loss = lossValue(step.loss);
        callbacks.batchHook(event);
      }
      next = stream.next();
      const auto now = Clock::now();
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
  if (dataParallel_) {
    const std::vector<double> sums =
        dataParallel_->sumOverRanks({lossSum.item<double>(), static_cast<double>(result.samples)}, "the evaluation loss");
    lossSum.fill_(sums[0]);
    result.samples = static_cast<int64_t>(sums[1]);
    sumOverRanks(metrics, loggedSums);
  }
  result.loss = lossSum.item<double>() / static_cast<double>(result.samples);
  result.metrics = metrics.compute(result.loss);
  putMeans(result.metrics, loggedSums, result.samples);
  result.seconds = secondsSince(started);
  return result;
}

at::Tensor TrainingEngine::predict(const at::Tensor& inputs, int64_t batchSize) {
  useRequestedThreads();
  return predictInBatches(*model_, inputs, {device_, autocastDtype_, batchSize});
}

}  // namespace firebrand

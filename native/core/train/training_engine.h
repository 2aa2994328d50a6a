// The training loop: owns a model, its loss and optimizer, and runs whole
// epochs of steps without leaving C++. Each micro-batch's loss is read back
// once (the step's finite check needs it); metrics stay on the device until
// the epoch ends.
#pragma once
#include <c10/core/Device.h>
#include <torch/optim/optimizer.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/data/batch_stream.h"
#include "core/data/batch_transforms.h"
#include "core/data/tensor_dataset.h"
#include "core/distributed/rank_reducer.h"
#include "core/metrics/metric_set.h"
#include "core/model/model.h"
#include "core/model/weights.h"
#include "core/optim/lr_scheduler.h"
#include "core/optim/optimizer_unit.h"
#include "core/runtime/thread_tuner.h"
#include "core/train/epoch_totals.h"
#include "core/train/fine_tuning.h"
#include "core/train/fit_options.h"
#include "core/train/grad_scaler.h"
#include "core/train/learning_rate_control.h"
#include "core/train/loss_function.h"
#include "core/train/step_report.h"
#include "core/train/weight_average.h"

namespace firebrand {

struct DistributedOptions;

class TrainingEngine {
 public:
  struct Precision {
    std::optional<at::ScalarType> autocastDtype;  // nullopt: full precision
    GradScalerOptions gradScaler;
  };
  // `loss` may be absent when the model defines training_step (and
  // validation_step, to evaluate). `metrics` are metric names
  // (metric_set.h); class-index losses always get accuracy.
  TrainingEngine(std::shared_ptr<Model> model, std::optional<LossFunction> loss,
                 const std::vector<OptimizerUnitSpec>& optimizers, const SchedulerSpec& scheduler,
                 const std::vector<std::string>& metrics, const Precision& precision, c10::Device device);
  ~TrainingEngine();

  // Makes this engine one rank of a data-parallel run: joins the process group
  // (blocking until every rank has) and takes rank 0's weights. From then on
  // epochs are sharded by rank, gradients averaged over the ranks, and losses
  // and metrics reported globally.
  void distribute(const DistributedOptions& options);
  // The run's ranks: one (sums are the rank's own) until distribute() is called.
  RankReducer& ranks() const { return *ranks_; }
  bool distributed() const { return distributed_; }
  // `sampler` as this rank uses it (its shard of each epoch).
  SamplerOptions rankSampler(const SamplerOptions& sampler) const;

  // Starts a run of `numEpochs` epochs of `batchesPerEpoch` batches (nullopt:
  // streamed data of unknown length) with `options` for all of its epochs:
  // the LR schedule restarts, planned over the run's optimizer steps.
  struct FitPlan {
    std::optional<int64_t> batchesPerEpoch;
    std::optional<int64_t> optimizerStepsPerEpoch;
    std::optional<int64_t> totalSteps;
  };
  // `maxSteps` caps the run's optimizer steps (and the schedule's length).
  // `fromDataset`: called for a dataset (whose targets gave 'balanced' class weights).
  FitPlan beginFit(std::optional<int64_t> batchesPerEpoch, const FitOptions& options, int64_t numEpochs,
                   std::optional<int64_t> maxSteps = std::nullopt, bool fromDataset = false);
  // The same over a dataset: its batches per epoch are this rank's, as options.sampler cuts them; a loss
  // weighted 'balanced' takes its class weights from the dataset's targets.
  FitPlan beginFit(const TensorDataset& data, const FitOptions& options, int64_t numEpochs,
                   std::optional<int64_t> maxSteps = std::nullopt);
  // One evaluation's value of the metric the scheduler monitors (reduce_on_plateau).
  void onEvalMetric(double value);
  // The epoch-log field reduce_on_plateau watches, or "" for step-driven schedules.
  std::string schedulerMonitor() const {
    if (units_.empty()) return "";  // a trainer without optimizer, which fit refuses
    const LrScheduler& scheduler = units_.front().scheduler();
    return scheduler.drivenByMetric() ? scheduler.monitor() : "";
  }

  // One epoch (or its segment up to a pause) over a dataset's batches, cut
  // (and transformed) by a DatasetLoader as the fit's options say.
  // `batchHook`, when set, is called before and after every micro-batch.
  EpochResult trainEpoch(std::shared_ptr<const TensorDataset> dataset, const BatchTransforms& transforms,
                         const EpochSegment& segment, const ReportSink& report, const BatchHook& batchHook = {});
  // One epoch over a stream's batches (the fit's sampler and loader options are not used).
  EpochResult trainEpoch(BatchStream& stream, const EpochSegment& segment, const ReportSink& report,
                         const BatchHook& batchHook = {});
  // Loss and metrics in eval mode; see EvalCallbacks for progress and per-batch hooks.
  EvalResult evaluate(std::shared_ptr<const TensorDataset> dataset, const BatchTransforms& transforms,
                      int64_t batchSize, const EvalCallbacks& callbacks = {});
  EvalResult evaluate(BatchStream& stream, const EvalCallbacks& callbacks = {});

  // The optimizers' learning rates: set from any thread, applied at the next step, published for reads
  // while an epoch runs.
  LearningRateControl& learningRates() { return learningRates_; }
  const LearningRateControl& learningRates() const { return learningRates_; }

  // Work the caller runs between two optimizer steps of an epoch, on the
  // training thread (predictions asked for during a fit); each call must be
  // cheap when there is nothing to run.
  void setStepBoundary(std::function<void()> work) { stepBoundary_ = std::move(work); }

  // Whether each batch's floating fields are checked for NaN/Inf (on the CPU,
  // before the copy): off by default, since it reads every value once more.
  void checkFiniteInputs(bool on) { checkFiniteInputs_ = on; }

  // Ends the running epoch after its current step; cleared by clearStop().
  void requestStop() { stopRequested_ = true; }
  void clearStop() { stopRequested_ = false; }

  int64_t globalStep() const { return globalStep_; }
  // The state dict as a .safetensors file (atomically).
  void saveWeights(const std::string& path) const;
  // Writes everything training needs to continue exactly into `folder` (which
  // must exist): model.safetensors, optimizer[-<name>].pt (libtorch archives),
  // training_state.safetensors (schedules, GradScaler, RNG states, global
  // step). Each file is written atomically and fsynced. With the optimizer
  // state sharded, call gatherOptimizerState on every rank first; rank 0
  // saves the whole state, then keeps its own share only.
  void saveState(const std::string& folder);
  // With config.distributed.zeroRedundancyOptimizer: every rank's share of the
  // optimizer state sent to rank 0 (a collective); nothing otherwise.
  void gatherOptimizerState() { ranks_->gatherOptimizerState(units_); }
  // Bytes of optimizer state (moments, momentum buffers) this process holds.
  int64_t optimizerStateBytes() const;
  // Restores what saveState wrote; call after beginFit, whose schedule it
  // moves to the saved step. A file that does not fit this engine (another
  // model shape, optimizer or schedule) is an error naming it.
  void loadState(const std::string& folder);
  // Loads weights only (a .safetensors file, or a TorchScript module's
  // parameters and buffers) into the model; see loadWeights for `strict`.
  WeightsReport initWeightsFrom(const std::string& path, bool strict,
                                const std::map<std::string, std::optional<std::string>>& renames = {});

  // Keeps an exponential moving average of the weights from here on (config.ema), updated after
  // each optimizer step, evaluated on (unless options.evaluate is off) and checkpointed.
  void averageWeights(const WeightAverageOptions& options);
  // The end of a fit with an average: the model takes the averaged weights.
  void copyAverageToModel();

  // fromPretrained's quantize: 'int8', once the weights are loaded: the linear layers under `roots`
  // become int8 (int8_quantization.h), and the trainer lets go of their float weights. Their paths.
  std::vector<std::string> quantizeInt8(const std::vector<std::string>& roots);

  // What trains, and LoRA adapters (fine_tuning.h); changes during a fit at a step boundary.
  FineTuning& fineTuning() { return fineTuning_; }

  // True between the micro-batches of an accumulation group (gradients are
  // gathered, no optimizer step follows this backward): DDP skips its all-reduce then.
  bool accumulating() const { return accumulating_; }
  // Throws, naming `operation`, while a per-batch hook runs inside an accumulation group whose
  // gradients are partly gathered: what trains (or the weights) must not change before its step.
  void requireStepBoundary(const std::string& operation) const;
  Model& model() const { return *model_; }
  std::shared_ptr<Model> sharedModel() const { return model_; }
  const c10::Device& device() const { return device_; }
  // The dtype forward runs in under config.mixedPrecision (nullopt: full precision), predictions included.
  std::optional<at::ScalarType> autocastDtype() const { return autocastDtype_; }

 private:
  struct StepValues {
    at::Tensor loss;                     // unweighted (with several optimizers: the sum of their losses)
    at::Tensor output;                   // undefined for a model's own training_step
    TensorDict logged;                   // a custom step's other entries
    std::vector<at::Tensor> unitLosses;  // with several optimizers: each one's loss, in order
  };
  // Where a running epoch is: its batches, whether the data ran out, its clock.
  struct EpochCursor {
    int64_t epoch = 0;
    int64_t batch = 0;               // the next micro-batch's index in the epoch
    std::optional<int64_t> batches;  // in the epoch, when the data says
    bool exhausted = false;          // the data has no more batches
    std::chrono::steady_clock::time_point started;
    std::chrono::steady_clock::time_point lastReport;
  };

  // The steps of trainEpoch, in the order it calls them.
  EpochCursor beginEpoch(const BatchStream& stream, const EpochSegment& segment);
  std::optional<Batch> fetch(BatchStream& stream, EpochCursor& cursor);
  // `first` and the micro-batches that follow it in its accumulation group.
  std::vector<Batch> gatherGroup(Batch first, BatchStream& stream, EpochCursor& cursor);
  // Forward and backward of each micro-batch, then one optimizer step.
  GroupOutcome trainGroup(std::vector<Batch> group, EpochCursor& cursor, const BatchHook& batchHook);
  // A progress report every progressIntervalSeconds; a log report every logEvery steps and at the
  // segment's last step (the epoch's end, a pause or a stop).
  void reportIfDue(const GroupOutcome& group, bool lastOfSegment, EpochCursor& cursor, const ReportSink& report);
  EpochResult endEpoch(const EpochCursor& cursor);

  void zeroGrads();
  // Faults in the memory of the trainable parameters' gradients (CPU), inside the epoch's memory cache,
  // before the first step: first-touch faults made that step cost 7x a steady one on a VM with slow faults.
  void prefaultGradients();
  // Whether micro-batches weigh by the targets the loss counts (a class-index loss; not with a model's
  // own training_step) rather than by their samples.
  bool countsTargets() const;
  // Each micro-batch's weight in its group's loss: its counted targets or its samples.
  std::vector<double> lossWeights(const std::vector<Batch>& group) const;
  // Forward and backward of one micro-batch; its loss is weighted by `lossWeight` (its share of the
  // accumulation group's loss) for backward. `counted`: the targets its loss counts, which its sum is
  // divided by (0 counted: a loss of 0 that moves nothing). Returns its loss; its metrics and logged
  // values go to the epoch's sums.
  double trainMicroBatch(const Batch& batch, double lossWeight, std::optional<double> counted);
  StepValues forwardBackward(const Batch& batch, double lossWeight, std::optional<double> counted);
  // Calls `batchHook` at `phase` of a micro-batch, with the rates it may read; `withGradients` of the
  // group's `groupSize` micro-batches have gathered gradients not yet stepped (0 at a step boundary).
  void callHook(const BatchHook& batchHook, BatchEvent& event, BatchEvent::Phase phase, size_t withGradients,
                size_t groupSize);
  // Checks a CPU batch (labels in range) and moves it to the device, targets as the loss takes them.
  Batch prepareBatch(Batch batch) const;
  // The stream's first batch, checked against the model.
  Batch firstBatch(BatchStream& stream);
  // The model's training_step / validation_step, or forward + loss.
  // The loss of `batch`: its mean, or its sum over `counted` targets (a class-index loss in training).
  StepValues runStep(const Batch& batch, bool training, std::optional<double> counted = std::nullopt);
  const LossFunction& lossFunction(const char* purpose) const;
  // Clips, checks for non-finite values and steps the optimizer once per group.
  // Returns false when the step was skipped (nonFiniteLoss: 'skip').
  bool optimizerStep(double groupLoss, std::optional<double>& gradNorm);
  at::Tensor inputsToDevice(const at::Tensor& inputs) const;
  // Runs one sample of a batch through the model (eval mode, no grad) so that a
  // data/model mismatch fails before any step, naming both sides; notes the
  // number of classes that labels are checked against.
  // `inputOrigin`: what the inputs are made from (BatchStream::inputOrigin), named in a shape error.
  void checkBatchFits(const Batch& batch, const std::string& inputOrigin);
  LoaderOptions loaderOptions(LoaderOptions options) const;
  // The metrics' and logged values' sums over the ranks, as values.
  MetricValues globalMetrics(const MetricSet& metrics, const TensorDict& loggedSums, double loss, int64_t samples,
                             bool acrossRanks = true);

  std::shared_ptr<Model> model_;
  std::unique_ptr<RankReducer> ranks_;
  bool distributed_ = false;
  std::vector<at::Tensor> parameters_;
  std::optional<LossFunction> loss_;
  std::vector<OptimizerUnit> units_;
  LearningRateControl learningRates_{units_};
  FineTuning fineTuning_{
      *model_,
      units_,
      learningRates_,
      {[this] { return distributed_; }, [this](const std::string& operation) { requireStepBoundary(operation); }}};
  std::unique_ptr<WeightAverage> average_;
  MetricSet metrics_;
  std::optional<at::ScalarType> autocastDtype_;
  GradScaler scaler_;
  std::optional<FitOptions> fit_;  // set by beginFit
  c10::Device device_;
  at::ScalarType parameterDtype_;
  std::atomic<bool> stopRequested_{false};
  std::atomic<int64_t> globalStep_{0};  // read from the JS thread while training
  bool accumulating_ = false;
  // Set while a per-batch hook runs with part of its group's gradients gathered.
  struct GroupPosition {
    int64_t withGradients;  // micro-batches whose backward ran
    int64_t size;
  };
  std::optional<GroupPosition> partialGroup_;
  // With adaptive threads (config.numThreads 'auto'): the count training steps fastest with now.
  std::optional<ThreadTuner> threadTuner_;
  void useThreads();
  EpochTotals epochTotals_;
  std::optional<int64_t> classCount_;  // the model's outputs, for label checks
  bool checkFiniteInputs_ = false;
  std::function<void()> stepBoundary_;
};

}  // namespace firebrand

// TrainingEngine's weights and state in files: the checkpoint files C++ owns
// (saveState / loadState), weights in and out.
#include <ATen/ATen.h>
#include <torch/cuda.h>

#include <fstream>
#include <mutex>

#include "core/errors.h"
#include "core/inference/model_exports.h"
#include "core/io/atomic_file.h"
#include "core/io/safetensors_reader.h"
#include "core/io/safetensors_writer.h"
#include "core/model/int8_quantization.h"
#include "core/model/weights.h"
#include "core/runtime/malloc_settings.h"
#include "core/train/training_engine.h"

namespace firebrand {
namespace {

constexpr const char* kModelFile = "model.safetensors";
constexpr const char* kStateFile = "training_state.safetensors";
constexpr const char* kAverageFile = "ema.safetensors";  // config.ema's averages, by state-dict name

std::string optimizerFile(const OptimizerUnit& unit) {
  return unit.name().empty() ? "optimizer.pt" : "optimizer-" + unit.name() + ".pt";
}

std::string scheduleKey(const OptimizerUnit& unit) {
  return unit.name().empty() ? "schedule" : "schedule." + unit.name();
}

// The default generators: the CPU's, then each CUDA device's.
std::vector<std::pair<std::string, at::Generator>> generators() {
  std::vector<std::pair<std::string, at::Generator>> all = {{"rng.cpu", at::detail::getDefaultCPUGenerator()}};
  const int64_t devices = static_cast<int64_t>(torch::cuda::device_count());
  for (int64_t i = 0; i < devices; ++i) {
    all.emplace_back("rng.cuda." + std::to_string(i),
                     at::globalContext().defaultGenerator(c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(i))));
  }
  return all;
}

const at::Tensor& entry(const TensorDict& state, const std::string& key, const std::string& path) {
  const auto it = state.find(key);
  if (it == state.end()) throw FileError(path + ": no '" + key + "' (it has " + fieldNames(state) + ")");
  return it->second;
}

std::string existingFile(const std::string& folder, const std::string& name) {
  const std::string path = folder + "/" + name;
  if (!std::ifstream(path).good()) throw FileError(path + ": missing from the checkpoint");
  return path;
}

}  // namespace

void TrainingEngine::saveState(const std::string& folder) {
  saveWeights(folder + "/" + kModelFile);
  TensorDict state;
  state["global_step"] = at::tensor(static_cast<int64_t>(globalStep_), at::TensorOptions().dtype(at::kLong));
  for (auto& unit : units_) {
    const std::string path = folder + "/" + optimizerFile(unit);
    unit.saveOptimizer(path);
    unit.dropForeignState();  // the other ranks' shares, gathered for this file
    syncFile(path);
    state[scheduleKey(unit)] = unit.scheduleState();
  }
  if (scaler_.enabled()) {
    for (const auto& [key, value] : scaler_.state()) state["grad_scaler." + key] = value.cpu();
  }
  for (auto& [key, generator] : generators()) {
    std::lock_guard<std::mutex> lock(generator.mutex());
    state[key] = generator.get_state();
  }
  if (average_) writeSafetensors(folder + "/" + kAverageFile, average_->state(), {{"format", "pt"}});
  auto metadata = fineTuning_.state();
  metadata["format"] = "firebrand";
  writeSafetensors(folder + "/" + kStateFile, state, metadata);
}

int64_t TrainingEngine::optimizerStateBytes() const {
  int64_t bytes = 0;
  for (const auto& unit : units_) bytes += unit.stateBytes();
  return bytes;
}

void TrainingEngine::averageWeights(const WeightAverageOptions& options) {
  average_ = std::make_unique<WeightAverage>(*model_, options);
}

void TrainingEngine::copyAverageToModel() {
  if (!average_) throw InvalidState("copyAverageToModel: the trainer keeps no average of its weights (config.ema)");
  average_->copyToModel();
}

std::vector<std::string> TrainingEngine::quantizeInt8(const std::vector<std::string>& roots) {
  if (fit_) throw InvalidState("quantizeInt8: a fit is running");
  // Each float weight goes as soon as its int8 values exist: none is held here meanwhile.
  parameters_.clear();
  std::vector<std::string> paths = firebrand::quantizeInt8(*model_, roots);
  parameters_ = model_->parameters();  // the quantized weights are buffers now
  releaseFreedMemory();                // the float weights, freed for good
  return paths;
}

void TrainingEngine::saveWeights(const std::string& path) const {
  const auto state = stateDictCopy(*model_);
  writeSafetensors(path, TensorDict(state.begin(), state.end()), {{"format", "pt"}});
}

WeightsReport TrainingEngine::initWeightsFrom(const std::string& path, bool strict,
                                              const std::map<std::string, std::optional<std::string>>& renames) {
  requireStepBoundary("initWeightsFrom");
  RenamedReader weights(openWeightsFile(path), renames, path);
  return loadWeights(*model_, weights, strict, path);
}

void TrainingEngine::loadState(const std::string& folder) {
  if (!fit_) throw InvalidState("loadState: call beginFit first; the saved schedule continues the planned one");
  const std::string modelPath = existingFile(folder, kModelFile);
  loadWeights(*model_, readSafetensors(modelPath).tensors, /*strict=*/true, modelPath);
  const std::string statePath = existingFile(folder, kStateFile);
  const SafetensorsFile stateFile = readSafetensors(statePath);
  // Frozen parameters and unfrozen groups first: the optimizers' saved groups must find theirs.
  fineTuning_.restore(stateFile.metadata, statePath);
  for (auto& unit : units_) unit.loadOptimizer(existingFile(folder, optimizerFile(unit)));
  if (average_) {
    const std::string averagePath = folder + "/" + kAverageFile;
    std::ifstream probe(averagePath);
    if (!probe)
      throw FileError(averagePath + ": missing; the checkpoint was saved without config.ema, which this trainer has");
    average_->restore(readSafetensors(averagePath).tensors, averagePath);
  }
  const TensorDict& state = stateFile.tensors;
  globalStep_ = entry(state, "global_step", statePath).item<int64_t>();
  for (auto& unit : units_) unit.restoreSchedule(entry(state, scheduleKey(unit), statePath));
  if (scaler_.enabled()) {
    scaler_.restore({{"scale", entry(state, "grad_scaler.scale", statePath)},
                     {"growth_tracker", entry(state, "grad_scaler.growth_tracker", statePath)}});
  }
  for (auto& [key, generator] : generators()) {
    const auto it = state.find(key);
    if (it == state.end()) continue;  // saved without this CUDA device
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(it->second);
  }
}

}  // namespace firebrand

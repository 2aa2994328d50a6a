// Everything needed to make a TrainingEngine, as a caller describes it.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "core/model/layer_spec.h"
#include "core/model/script_model.h"
#include "core/train/optimizer_unit.h"
#include "core/train/training_engine.h"

namespace firebrand {

// Exactly one of: layers, a TorchScript file, TorchScript source (+ parameters).
struct ModelSource {
  ModelSpec layers;
  std::string torchScriptFile;
  std::string torchScriptSource;
  std::vector<NamedTensor> parameters;
};

struct EngineSpec {
  ModelSource model;
  // Empty when the model's own training_step computes the loss.
  std::string lossName;
  OptionMap lossOptions;
  // One unit for a model's only optimizer; several for GAN-style training.
  std::vector<OptimizerUnitSpec> optimizers;
  SchedulerSpec scheduler;
  std::vector<std::string> metrics;
  std::string mixedPrecision = "no";
  OptionMap gradScaler;
  std::string device = "cpu";
  // Check every floating batch field for NaN/Inf before it reaches the model.
  bool checkFiniteInputs = false;
  // Seeds libtorch's generators before the weights are initialised.
  std::optional<uint64_t> seed;
};

std::shared_ptr<TrainingEngine> makeEngine(const EngineSpec& spec);

}  // namespace firebrand

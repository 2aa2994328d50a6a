// Everything needed to make a TrainingEngine, as a caller describes it.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "core/model/model_source.h"
#include "core/nn/lora.h"
#include "core/optim/optimizer_unit.h"
#include "core/train/training_engine.h"

namespace firebrand {

struct EngineSpec {
  ModelSource model;
  // Empty when the model's own training_step computes the loss.
  std::string lossName;
  OptionMap lossOptions;
  // Which of several forward outputs the loss and metrics read, by name; empty: the first.
  std::string lossOutput;
  // One unit for a model's only optimizer; several for GAN-style training.
  std::vector<OptimizerUnitSpec> optimizers;
  SchedulerSpec scheduler;
  std::vector<std::string> metrics;
  std::string mixedPrecision = "no";
  GradScalerOptions gradScaler;
  std::string device = "cpu";
  // Check every floating batch field for NaN/Inf before it reaches the model.
  bool checkFiniteInputs = false;
  // Patterns of the parameters to freeze before the optimizers are made (name_patterns.h).
  std::vector<std::string> freeze;
  // Modules whose activations are recomputed in backward (config.activationCheckpointing).
  std::vector<std::string> activationCheckpointing;
  // LoRA adapters on the targeted linear layers, everything else frozen.
  std::optional<LoraOptions> lora;
  // Module paths whose linear layers fromPretrained's quantize: 'int8' quantizes once their weights
  // are loaded ("" the whole model): frozen before the optimizers are made (int8_quantization.h).
  std::vector<std::string> int8Roots;
  // config.ema: an average of the weights, when enabled.
  std::optional<WeightAverageOptions> ema;
  // Seeds libtorch's generators before the weights are initialised.
  std::optional<uint64_t> seed;
};

std::shared_ptr<TrainingEngine> makeEngine(const EngineSpec& spec);

}  // namespace firebrand

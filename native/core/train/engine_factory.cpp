#include "core/train/engine_factory.h"

#include "core/model/freezing.h"
#include "core/model/int8_quantization.h"
#include "core/model/lora_adapters.h"
#include "core/runtime/device.h"
#include "core/runtime/mixed_precision.h"
#include "core/runtime/runtime_info.h"

namespace firebrand {

std::shared_ptr<TrainingEngine> makeEngine(const EngineSpec& spec) {
  // Loss and device are checked first: they are cheap and fail without side effects.
  std::optional<LossFunction> loss;
  if (!spec.lossName.empty()) loss.emplace(spec.lossName, spec.lossOptions);
  const c10::Device device = parseDevice(spec.device);
  TrainingEngine::Precision precision;
  precision.autocastDtype = autocastDtype(spec.mixedPrecision, device);
  precision.gradScaler = spec.gradScaler;
  if (spec.seed) manualSeed(*spec.seed);
  auto model = buildModel(spec.model);
  if (!spec.lossOutput.empty()) model->selectOutput(spec.lossOutput);
  if (!spec.freeze.empty()) freezeMatching(*model, spec.freeze, "config.freeze");
  if (spec.lora) applyLora(*model, *spec.lora);
  if (!spec.int8Roots.empty()) freezeForInt8(*model, spec.int8Roots);
  if (!spec.activationCheckpointing.empty()) model->checkpointActivations(spec.activationCheckpointing);
  auto engine = std::make_shared<TrainingEngine>(std::move(model), std::move(loss), spec.optimizers, spec.scheduler,
                                                 spec.metrics, precision, device);
  engine->checkFiniteInputs(spec.checkFiniteInputs);
  if (spec.ema) engine->averageWeights(*spec.ema);
  return engine;
}

}  // namespace firebrand

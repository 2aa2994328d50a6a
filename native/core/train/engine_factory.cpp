#include "core/train/engine_factory.h"

#include "core/runtime/device.h"
#include "core/runtime/runtime_info.h"

namespace firebrand {

std::shared_ptr<TrainingEngine> makeEngine(const EngineSpec& spec) {
  // Loss and device are checked first: they are cheap and fail without side effects.
  LossFunction loss(spec.lossName, spec.lossOptions);
  const c10::Device device = parseDevice(spec.device);
  if (spec.seed) manualSeed(*spec.seed);
  auto model = std::make_shared<SequentialModel>(spec.layers);
  return std::make_shared<TrainingEngine>(std::move(model), std::move(loss), spec.optimizer, spec.scheduler, spec.metrics,
                                          device);
}

}  // namespace firebrand

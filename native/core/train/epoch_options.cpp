#include "core/train/epoch_options.h"

#include <limits>

#include "core/options/option_reader.h"

namespace firebrand {
EpochOptions epochOptions(const OptionMap& optionMap, const std::string& owner) {
  OptionReader reader(owner, optionMap);
  EpochOptions options;
  options.sampler.batchSize = reader.positiveInt("batchSize", options.sampler.batchSize);
  options.sampler.shuffle = reader.flag("shuffle", options.sampler.shuffle);
  options.sampler.dropLast = reader.flag("dropLast", options.sampler.dropLast);
  options.sampler.seed = static_cast<uint64_t>(reader.nonNegativeInt("seed", 0));
  options.sampler.rank = reader.nonNegativeInt("rank", 0);
  options.sampler.worldSize = reader.positiveInt("worldSize", 1);
  options.epoch = reader.nonNegativeInt("epoch", 0);
  options.startBatch = reader.nonNegativeInt("startBatch", 0);
  options.continueEpoch = reader.flag("continueEpoch", false);
  options.stopAtGlobalStep = reader.optionalInteger("stopAtGlobalStep");
  options.loader.numWorkers = reader.optionalInteger("numWorkers");
  options.loader.prefetchFactor = reader.positiveInt("prefetchFactor", options.loader.prefetchFactor);
  options.logEvery = reader.positiveInt("logEvery", options.logEvery);
  options.progressIntervalSeconds =
      reader.number("progressIntervalMs", options.progressIntervalSeconds * 1000, 0, kUnbounded) / 1000;
  options.step.gradientAccumulationSteps = reader.positiveInt("gradientAccumulationSteps", 1);
  options.step.maxGradNorm = reader.optionalNumber("maxGradNorm", 0, kUnbounded);
  options.step.clipValue = reader.optionalNumber("clipValue", 0, kUnbounded);
  options.step.nonFiniteLoss =
      reader.choice("nonFiniteLoss", "error", {"error", "skip"}) == "skip" ? NonFiniteLossPolicy::Skip
                                                                           : NonFiniteLossPolicy::Error;
  reader.finish();
  return options;
}

}  // namespace firebrand

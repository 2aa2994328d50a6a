#include "binding/config_convert.h"

#include "binding/convert.h"
#include "core/errors.h"

namespace firebrand::binding {
namespace {

std::optional<int64_t> optionalInteger(const Napi::Object& object, const char* name, const std::string& owner,
                                       int64_t min) {
  const Napi::Value value = object.Get(name);
  if (value.IsUndefined()) return std::nullopt;
  return toInteger(value, owner + "." + name, min);
}

std::optional<double> optionalNumber(const Napi::Object& object, const char* name, const std::string& owner) {
  const Napi::Value value = object.Get(name);
  if (value.IsUndefined()) return std::nullopt;
  return toNumber(value, owner + "." + name);
}

StepPolicy toStepPolicy(const Napi::Object& object, const std::string& owner) {
  StepPolicy policy;
  policy.gradientAccumulationSteps =
      toInteger(object.Get("gradientAccumulationSteps"), owner + ".gradientAccumulationSteps", 1);
  policy.maxGradNorm = optionalNumber(object, "maxGradNorm", owner);
  policy.clipValue = optionalNumber(object, "clipValue", owner);
  const std::string nonFinite = toString(object.Get("nonFiniteLoss"), owner + ".nonFiniteLoss");
  if (nonFinite != "error" && nonFinite != "skip") {
    throw InvalidArgument(owner + ".nonFiniteLoss must be 'error' or 'skip', got '" + nonFinite + "'");
  }
  policy.nonFiniteLoss = nonFinite == "skip" ? NonFiniteLossPolicy::Skip : NonFiniteLossPolicy::Error;
  return policy;
}

}  // namespace

Napi::Object toObject(const Napi::Value& value, const std::string& field) {
  if (!value.IsObject() || value.IsArray()) throw InvalidArgument(field + " must be an object");
  return value.As<Napi::Object>();
}

SamplerOptions toSamplerOptions(const Napi::Object& object, const std::string& owner) {
  SamplerOptions sampler;
  sampler.batchSize = toInteger(object.Get("batchSize"), owner + ".batchSize", 1);
  sampler.shuffle = toBoolean(object.Get("shuffle"), owner + ".shuffle");
  sampler.dropLast = toBoolean(object.Get("dropLast"), owner + ".dropLast");
  sampler.seed = static_cast<uint64_t>(toInteger(object.Get("seed"), owner + ".seed", 0));
  sampler.rank = optionalInteger(object, "rank", owner, 0).value_or(0);
  sampler.worldSize = optionalInteger(object, "worldSize", owner, 1).value_or(1);
  return sampler;
}

LoaderOptions toLoaderOptions(const Napi::Object& object, const std::string& owner) {
  LoaderOptions loader;
  loader.numWorkers = optionalInteger(object, "numWorkers", owner, 0);
  loader.prefetchFactor = toInteger(object.Get("prefetchFactor"), owner + ".prefetchFactor", 1);
  return loader;
}

FitOptions toFitOptions(const Napi::Value& value) {
  const Napi::Object object = toObject(value, "fit options");
  FitOptions options;
  options.sampler = toSamplerOptions(toObject(object.Get("sampler"), "fit options.sampler"), "fit options.sampler");
  options.loader = toLoaderOptions(toObject(object.Get("loader"), "fit options.loader"), "fit options.loader");
  options.step = toStepPolicy(toObject(object.Get("step"), "fit options.step"), "fit options.step");
  options.logEvery = toInteger(object.Get("logEvery"), "fit options.logEvery", 1);
  options.progressIntervalSeconds = toNumber(object.Get("progressIntervalMs"), "fit options.progressIntervalMs") / 1000;
  return options;
}

EpochSegment toEpochSegment(const Napi::Value& value) {
  const Napi::Object object = toObject(value, "epoch segment");
  EpochSegment segment;
  segment.epoch = toInteger(object.Get("epoch"), "epoch segment.epoch", 0);
  segment.startBatch = optionalInteger(object, "startBatch", "epoch segment", 0).value_or(0);
  const Napi::Value continueEpoch = object.Get("continueEpoch");
  segment.continueEpoch = !continueEpoch.IsUndefined() && toBoolean(continueEpoch, "epoch segment.continueEpoch");
  segment.stopAtGlobalStep = optionalInteger(object, "stopAtGlobalStep", "epoch segment", 0);
  return segment;
}

GradScalerOptions toGradScalerOptions(const Napi::Value& value) {
  const Napi::Object object = toObject(value, "gradScaler");
  GradScalerOptions options;
  options.enabled = toBoolean(object.Get("enabled"), "gradScaler.enabled");
  options.initScale = toNumber(object.Get("initScale"), "gradScaler.initScale");
  options.growthFactor = toNumber(object.Get("growthFactor"), "gradScaler.growthFactor");
  options.backoffFactor = toNumber(object.Get("backoffFactor"), "gradScaler.backoffFactor");
  options.growthInterval = toInteger(object.Get("growthInterval"), "gradScaler.growthInterval", 1);
  return options;
}

DistributedOptions toDistributedOptions(const Napi::Value& value) {
  const Napi::Object object = toObject(value, "distributed");
  DistributedOptions options;
  options.worldSize = toInteger(object.Get("worldSize"), "distributed.worldSize", 1);
  options.rank = toInteger(object.Get("rank"), "distributed.rank", 0);
  options.masterAddr = toString(object.Get("masterAddr"), "distributed.masterAddr");
  options.masterPort = toInteger(object.Get("masterPort"), "distributed.masterPort", 1);
  options.agentStorePrefix = toString(object.Get("agentStorePrefix"), "distributed.agentStorePrefix");
  options.backend = toString(object.Get("backend"), "distributed.backend");
  options.timeoutSeconds = toNumber(object.Get("timeout"), "distributed.timeout");
  options.bucketCapBytes =
      static_cast<int64_t>(toNumber(object.Get("bucketCapMb"), "distributed.bucketCapMb") * 1024 * 1024);
  options.broadcastBuffers = toBoolean(object.Get("broadcastBuffers"), "distributed.broadcastBuffers");
  options.zeroRedundancyOptimizer =
      toBoolean(object.Get("zeroRedundancyOptimizer"), "distributed.zeroRedundancyOptimizer");
  return options;
}

namespace {

// { name: 'adamw', lr: 1e-3, ... } -> ("adamw", { lr: 1e-3, ... })
std::pair<std::string, OptionMap> namedOptions(const Napi::Value& value, const std::string& field,
                                               const std::set<std::string>& skip = {}) {
  if (!value.IsObject() || value.IsArray()) throw InvalidArgument(field + " must be an object with a 'name'");
  const std::string name = toString(value.As<Napi::Object>().Get("name"), field + ".name");
  std::set<std::string> skipped = skip;
  skipped.insert("name");
  return {name, toOptionMap(value, field + " (" + name + ")", skipped)};
}

// [{ params: ['0.', '1.weight'], lr: 1e-4 }, ...]
std::vector<ParamGroupSpec> toParamGroups(const Napi::Value& value) {
  std::vector<ParamGroupSpec> groups;
  if (value.IsUndefined()) return groups;
  if (!value.IsArray())
    throw InvalidArgument("optimizer.paramGroups must be an array of { params, lr?, weightDecay? }");
  const auto array = value.As<Napi::Array>();
  for (uint32_t i = 0; i < array.Length(); ++i) {
    const std::string owner = "optimizer.paramGroups[" + std::to_string(i) + "]";
    const Napi::Value group = array.Get(i);
    if (!group.IsObject() || group.IsArray())
      throw InvalidArgument(owner + " must be an object { params, lr?, weightDecay? }");
    groups.push_back(
        {toStrings(group.As<Napi::Object>().Get("params"), owner + ".params"), toOptionMap(group, owner, {"params"})});
  }
  return groups;
}

OptimizerSpec toOptimizerSpec(const Napi::Value& value, const std::string& field) {
  OptimizerSpec spec;
  std::tie(spec.name, spec.options) = namedOptions(value, field, {"paramGroups"});
  spec.paramGroups = toParamGroups(value.As<Napi::Object>().Get("paramGroups"));
  return spec;
}

// [{ name: 'generator', optimizer: { name: 'adam', ... }, params: ['gen.'], loss: 'loss_g' }, ...]
std::vector<OptimizerUnitSpec> toOptimizerUnits(const Napi::Value& value) {
  if (!value.IsArray() || value.As<Napi::Array>().Length() == 0) {
    throw InvalidArgument("optimizers must be a non-empty array of { name, optimizer, params, loss }");
  }
  const auto array = value.As<Napi::Array>();
  std::vector<OptimizerUnitSpec> units;
  for (uint32_t i = 0; i < array.Length(); ++i) {
    const std::string field = "optimizers[" + std::to_string(i) + "]";
    if (!array.Get(i).IsObject()) throw InvalidArgument(field + " must be { name, optimizer, params, loss }");
    const auto unit = array.Get(i).As<Napi::Object>();
    units.push_back({toString(unit.Get("name"), field + ".name"),
                     toOptimizerSpec(unit.Get("optimizer"), field + ".optimizer"),
                     toStrings(unit.Get("params"), field + ".params"), toString(unit.Get("loss"), field + ".loss")});
  }
  return units;
}

}  // namespace

EngineSpec toEngineSpec(const Napi::Value& value) {
  if (!value.IsObject()) throw InvalidArgument("engine spec must be an object");
  const auto object = value.As<Napi::Object>();
  EngineSpec spec;
  spec.model = toModelSource(object.Get("model"));
  if (!object.Get("loss").IsUndefined()) {
    std::tie(spec.lossName, spec.lossOptions) = namedOptions(object.Get("loss"), "loss");
  }
  // src/training/objective-schemas.ts gives one of optimizer and optimizers, or neither (an inference-only trainer).
  if (!object.Get("optimizers").IsUndefined()) {
    spec.optimizers = toOptimizerUnits(object.Get("optimizers"));
  } else if (!object.Get("optimizer").IsUndefined()) {
    spec.optimizers.push_back({"", toOptimizerSpec(object.Get("optimizer"), "optimizer"), {}, "loss"});
  }
  if (!object.Get("lrScheduler").IsUndefined()) {
    std::tie(spec.scheduler.name, spec.scheduler.options) = namedOptions(object.Get("lrScheduler"), "lrScheduler");
  }
  if (!object.Get("mixedPrecision").IsUndefined()) {
    spec.mixedPrecision = toString(object.Get("mixedPrecision"), "config.mixedPrecision");
  }
  spec.gradScaler = toGradScalerOptions(object.Get("gradScaler"));
  if (!object.Get("metrics").IsUndefined()) spec.metrics = toStrings(object.Get("metrics"), "config.metrics");
  if (!object.Get("device").IsUndefined()) spec.device = toString(object.Get("device"), "config.device");
  if (!object.Get("lossOutput").IsUndefined())
    spec.lossOutput = toString(object.Get("lossOutput"), "config.lossOutput");
  if (!object.Get("checkFiniteInputs").IsUndefined()) {
    spec.checkFiniteInputs = toBoolean(object.Get("checkFiniteInputs"), "config.checkFiniteInputs");
  }
  if (!object.Get("ema").IsUndefined()) {
    const Napi::Object ema = toObject(object.Get("ema"), "config.ema");
    if (toBoolean(ema.Get("enabled"), "config.ema.enabled")) {
      spec.ema = WeightAverageOptions{toNumber(ema.Get("decay"), "config.ema.decay"),
                                      toBoolean(ema.Get("warmup"), "config.ema.warmup"),
                                      toBoolean(ema.Get("evaluate"), "config.ema.evaluate")};
    }
  }
  if (!object.Get("lora").IsUndefined()) {
    const Napi::Object lora = toObject(object.Get("lora"), "lora");
    spec.lora = LoraOptions{toInteger(lora.Get("r"), "lora.r", 1),
                            toNumber(lora.Get("alpha"), "lora.alpha"),
                            toNumber(lora.Get("dropout"), "lora.dropout"),
                            toStrings(lora.Get("targetModules"), "lora.targetModules"),
                            toBoolean(lora.Get("useRslora"), "lora.useRslora"),
                            toBoolean(lora.Get("useDora"), "lora.useDora"),
                            toStrings(lora.Get("modulesToSave"), "lora.modulesToSave")};
  }
  if (!object.Get("activationCheckpointing").IsUndefined()) {
    spec.activationCheckpointing = toStrings(object.Get("activationCheckpointing"), "config.activationCheckpointing");
  }
  if (!object.Get("int8Roots").IsUndefined()) spec.int8Roots = toStrings(object.Get("int8Roots"), "int8Roots");
  if (!object.Get("freeze").IsUndefined()) spec.freeze = toStrings(object.Get("freeze"), "config.freeze");
  if (!object.Get("seed").IsUndefined())
    spec.seed = static_cast<uint64_t>(toInteger(object.Get("seed"), "config.seed", 0));
  return spec;
}

}  // namespace firebrand::binding

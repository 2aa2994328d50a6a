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
  options.backend = toString(object.Get("backend"), "distributed.backend");
  options.timeoutSeconds = toNumber(object.Get("timeout"), "distributed.timeout");
  options.bucketCapBytes =
      static_cast<int64_t>(toNumber(object.Get("bucketCapMb"), "distributed.bucketCapMb") * 1024 * 1024);
  options.broadcastBuffers = toBoolean(object.Get("broadcastBuffers"), "distributed.broadcastBuffers");
  return options;
}

}  // namespace firebrand::binding

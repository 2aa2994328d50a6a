// The config's parts as TypeScript sends them, already validated and
// defaulted by src/training/config-schema.ts (and src/data/loader-options.ts):
// read by type, each field by its name. A wrong type here is a bug inside
// firebrand, reported as such rather than as a user's mistake.
#pragma once
#include <napi.h>

#include "core/data/batch_sampler.h"
#include "core/data/loader_options.h"
#include "core/distributed/distributed_options.h"
#include "core/train/engine_factory.h"
#include "core/train/fit_options.h"
#include "core/train/grad_scaler.h"

namespace firebrand::binding {

// { batchSize, shuffle, dropLast, seed, rank?, worldSize? }
SamplerOptions toSamplerOptions(const Napi::Object& object, const std::string& owner);
// { numWorkers?, prefetchFactor }
LoaderOptions toLoaderOptions(const Napi::Object& object, const std::string& owner);
// { sampler, loader, step: { gradientAccumulationSteps, maxGradNorm?, clipValue?, nonFiniteLoss },
//   logEvery, progressIntervalMs }
FitOptions toFitOptions(const Napi::Value& value);
// { epoch, startBatch?, continueEpoch?, stopAtGlobalStep? }
EpochSegment toEpochSegment(const Napi::Value& value);
// { enabled, initScale, growthFactor, backoffFactor, growthInterval }
GradScalerOptions toGradScalerOptions(const Napi::Value& value);
// { rank, worldSize, masterAddr, masterPort, backend, timeout, bucketCapMb, broadcastBuffers }
DistributedOptions toDistributedOptions(const Napi::Value& value);
// The trainer's model, objectives and config (NativeEngineSpec in src/native.ts).
EngineSpec toEngineSpec(const Napi::Value& value);
// An object argument, or an error naming it.
Napi::Object toObject(const Napi::Value& value, const std::string& field);

}  // namespace firebrand::binding

// The core's reports and results as plain JS objects (camelCase fields).
#pragma once
#include <napi.h>

#include <string>
#include <vector>

#include "core/model/weights.h"
#include "core/runtime/runtime_info.h"
#include "core/train/step_report.h"
#include "core/train/training_engine.h"

namespace firebrand::binding {

Napi::Array toJs(Napi::Env env, const std::vector<std::string>& values);
Napi::Array toJs(Napi::Env env, const std::vector<double>& values);
Napi::Object toJs(Napi::Env env, const StepReport& report);
Napi::Object toJs(Napi::Env env, const EvalReport& report);
// { hook: 'preTrainBatch' | 'postTrainBatch' | 'preValBatch' | 'postValBatch', epoch, batch, size, globalStep, loss? }
Napi::Object toJs(Napi::Env env, const BatchEvent& event);
Napi::Object toJs(Napi::Env env, const EpochResult& result);
Napi::Object toJs(Napi::Env env, const EvalResult& result);
Napi::Object toJs(Napi::Env env, const RuntimeInfo& info);
Napi::Object toJs(Napi::Env env, const TrainingEngine::FitPlan& plan);
// { missing: string[], unexpected: string[] }
Napi::Object toJs(Napi::Env env, const WeightsReport& report);
// { parameters: [{ name, shape, dtype, requiresGrad }], buffers: [{ name, shape, dtype }] }, in state-dict order.
Napi::Object describeModel(Napi::Env env, const Model& model);

}  // namespace firebrand::binding

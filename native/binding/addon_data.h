// Per-environment state of the addon (one per Node worker thread): the JS
// classes that handles are made from and checked against, and the gate that
// native threads' calls into this environment pass.
#pragma once
#include <napi.h>

#include <memory>

#include "binding/napi_gate.h"

namespace firebrand::binding {

struct AddonData {
  Napi::FunctionReference dataset;
  Napi::FunctionReference batchQueue;
  Napi::FunctionReference loader;
  Napi::FunctionReference model;
  std::shared_ptr<NapiGate> gate = std::make_shared<NapiGate>();
};

inline AddonData& addonData(Napi::Env env) { return *env.GetInstanceData<AddonData>(); }

}  // namespace firebrand::binding

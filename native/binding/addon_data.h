// Per-environment state of the addon (one per Node worker thread): the JS
// classes that handles are made from and checked against.
#pragma once
#include <napi.h>

namespace firebrand::binding {

struct AddonData {
  Napi::FunctionReference dataset;
  Napi::FunctionReference batchQueue;
  Napi::FunctionReference loader;
};

inline AddonData& addonData(Napi::Env env) { return *env.GetInstanceData<AddonData>(); }

}  // namespace firebrand::binding

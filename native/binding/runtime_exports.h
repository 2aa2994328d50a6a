// Process-wide functions: runtime facts, threads, seeding.
#pragma once
#include <napi.h>

namespace firebrand::binding {

void exportRuntime(Napi::Env env, Napi::Object exports);

}  // namespace firebrand::binding

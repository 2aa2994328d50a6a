// loadSafetensors / saveSafetensors: the C++ reader and writer for JavaScript.
#pragma once
#include <napi.h>

namespace firebrand::binding {

void exportSafetensors(Napi::Env env, Napi::Object exports);

}  // namespace firebrand::binding

#include "binding/environment_teardown.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <vector>

#include "binding/addon_data.h"
#include "binding/task_thread.h"

namespace firebrand::binding {
namespace {

// How long the end of an environment waits for a running task to stop (it stops at its next step).
constexpr std::chrono::seconds kPatience{10};

// The gates of the environments not yet torn down; leaked, as process exit reads them.
struct OpenGates {
  std::mutex mutex;
  std::vector<std::shared_ptr<NapiGate>> gates;
};
OpenGates& openGates() {
  static OpenGates* const open = new OpenGates();
  return *open;
}

void tearDown(void* data) {
  const std::shared_ptr<NapiGate> gate = static_cast<AddonData*>(data)->gate;
  gate->close();
  {
    OpenGates& open = openGates();
    std::lock_guard<std::mutex> lock(open.mutex);
    open.gates.erase(std::remove(open.gates.begin(), open.gates.end(), gate), open.gates.end());
  }
  TaskThread::shutDown(gate.get(), kPatience);
}

struct ProcessExit {
  ~ProcessExit() {
    {
      OpenGates& open = openGates();
      std::lock_guard<std::mutex> lock(open.mutex);
      for (const auto& gate : open.gates) gate->close();
    }
    TaskThread::shutDown(nullptr, kPatience);
  }
} processExit;

}  // namespace

void exportTeardown(Napi::Env env, Napi::Object exports) {
  exports.Set("tearDownAtExit",
              Napi::Function::New(
                  env, [](const Napi::CallbackInfo& info) { tearDown(&addonData(info.Env())); }, "tearDownAtExit"));
}

void watchEnvironmentTeardown(Napi::Env env) {
  AddonData& data = addonData(env);
  {
    OpenGates& open = openGates();
    std::lock_guard<std::mutex> lock(open.mutex);
    open.gates.push_back(data.gate);
  }
  napi_add_env_cleanup_hook(env, tearDown, &data);
}

std::shared_ptr<NapiGate> napiGate(Napi::Env env) { return addonData(env).gate; }

void runTeardownFirst(Napi::Env env) {
  AddonData* data = &addonData(env);
  napi_remove_env_cleanup_hook(env, tearDown, data);
  napi_add_env_cleanup_hook(env, tearDown, data);
}

}  // namespace firebrand::binding

// The end of an environment (a worker thread's, or the main one's once its
// loop drains): its cleanup hook closes its Node-API gate, then stops and
// joins its task threads, so that none runs on, or calls into Node, after it.
// process.exit() runs no cleanup hook. Its 'exit' event does: src/native.ts
// calls tearDownAtExit from it, while every static object still lives. A
// static destructor does the same for any environment left, but exit() runs
// it after those of the statics libtorch makes on first use (2.14's float32
// precision settings): a task still running would use them destroyed.
#pragma once
#include <napi.h>

#include <memory>

#include "binding/napi_gate.h"

namespace firebrand::binding {

// From Init: this environment's gate, and the hook that closes it.
void watchEnvironmentTeardown(Napi::Env env);
// exports.tearDownAtExit(): this environment's teardown, for the main thread's 'exit' event.
void exportTeardown(Napi::Env env, Napi::Object exports);
// This environment's gate.
std::shared_ptr<NapiGate> napiGate(Napi::Env env);
// After making a thread-safe function: Node runs cleanup hooks newest first, and frees the function
// in one of them; the teardown hook, registered again, runs before that.
void runTeardownFirst(Napi::Env env);

}  // namespace firebrand::binding

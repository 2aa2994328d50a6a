// Per-batch hooks in JavaScript, called from the training thread, which
// waits until the JS side says it is done (its async hooks settled).
#pragma once
#include <napi.h>

#include "binding/task_thread.h"
#include "core/train/step_report.h"

namespace firebrand::binding {

// `onBatch(event, done)` runs on the JS thread and must call done(ok) once:
// ok false (a hook failed; JS keeps the error) ends the epoch with an error.
// An undefined `onBatch` gives an empty hook: no per-batch round trips.
// `thread` runs the hook's caller; its between-steps tasks run while it waits.
BatchHook makeBatchHook(Napi::Env env, const Napi::Value& onBatch, TaskThread& thread);

}  // namespace firebrand::binding

#include "core/runtime/inference_run.h"

namespace firebrand {
namespace {

thread_local bool running = false;

}  // namespace

InferenceRun::InferenceRun(bool on) : previous_(running) { running = on; }
InferenceRun::~InferenceRun() { running = previous_; }

bool inInferenceRun() { return running; }

}  // namespace firebrand

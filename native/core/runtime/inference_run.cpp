#include "core/runtime/inference_run.h"

namespace firebrand {
namespace {

thread_local bool running = false;

}  // namespace

InferenceRun::InferenceRun() : previous_(running) { running = true; }
InferenceRun::~InferenceRun() { running = previous_; }

bool inInferenceRun() { return running; }

}  // namespace firebrand

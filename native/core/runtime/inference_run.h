// Whether the calling thread is inside a prediction or a generation step. Kernels
// that compute without autograd in their own summation order (nn/streamed_linear)
// run only then: inside training, a checkpointed segment's no-grad forward must
// equal its recompute in backward, which runs the autograd path.
#pragma once
#include "core/runtime/thread_flag.h"

namespace firebrand {

// An InferenceRun::Scope marks the thread as inside one while alive (predict's optimizeForInference: false
// passes false).
using InferenceRun = ThreadFlag<struct InferenceRunTag>;

inline bool inInferenceRun() { return InferenceRun::isSet(); }

}  // namespace firebrand

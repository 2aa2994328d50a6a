// Whether layers draw their initial values. A pretrained model's weights are overwritten by its checkpoint
// right after the build, so, as transformers makes such a model without initializing what the checkpoint
// holds, its linear and embedding layers are then made without drawing: drawing TinyLlama-1.1B's took
// 16-24 s of a 25 s load on this project's VM.
#pragma once
#include "core/runtime/thread_flag.h"

namespace firebrand {

// While an UndrawnValues::Scope lives on this thread, the layers that can (linear, embedding) make their
// weights zeros, drawing nothing; the caller fills every one of them. Zeros, not uninitialized memory:
// what copies them before the checkpoint's values arrive (an EMA's average, 0 x NaN = NaN) reads numbers.
using UndrawnValues = ThreadFlag<struct UndrawnValuesTag>;

}  // namespace firebrand

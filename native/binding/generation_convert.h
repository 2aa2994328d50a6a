// generate() for a trainer's or a loaded model's binding: the generator made
// from JS's prompt and options, held by JS as a handle (an External owning it)
// between tokens, and each next token computed on the owner's task thread.
#pragma once
#include <napi.h>

#include <memory>

#include "binding/promise_settlement.h"
#include "binding/task_thread.h"
#include "core/inference/generation.h"

namespace firebrand::binding {

// (prompts: TypedArray[], options: { maxNewTokens, temperature?, topK?, topP?, greedy?, seed?, stopTokens?,
// contextLength?, kvCache? }) -> the handle of a generator sampling `model` on `device`, the prompts as one batch.
Napi::Value startGeneration(const Napi::CallbackInfo& info, std::shared_ptr<Model> model, c10::Device device);
// (handle) -> Promise<{ tokens: (number | null)[], logprobs? } | null>: each prompt's next token (null for
// one that has ended; null for all once done) and, with options.logprobs, its log-probability; on `thread`.
Napi::Value nextToken(const Napi::CallbackInfo& info, TaskThread& thread, PromiseSettlement::Settled settled,
                      bool betweenSteps);

}  // namespace firebrand::binding

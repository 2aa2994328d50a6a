// generate()'s options from JS, and the handle JS holds for a running
// generation between its next() calls (an External owning the generator).
#pragma once
#include <napi.h>

#include <memory>

#include "core/inference/generation.h"

namespace firebrand::binding {

// { maxNewTokens, temperature?, topK?, topP?, greedy?, seed?, stopTokens?, contextLength? }
GenerationOptions toGenerationOptions(const Napi::Value& value);
Napi::Value generationHandle(Napi::Env env, std::shared_ptr<TokenGenerator> generator);
std::shared_ptr<TokenGenerator> generationOf(const Napi::Value& handle);
// The next token as JS gets it: a number, or null once the generation is done.
Napi::Value fromToken(Napi::Env env, std::optional<int64_t> token);

}  // namespace firebrand::binding

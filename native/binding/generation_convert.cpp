#include "binding/generation_convert.h"

#include <limits>

#include "binding/convert.h"
#include "binding/js_errors.h"
#include "binding/thread_task.h"
#include "core/errors.h"
#include "core/runtime/runtime_info.h"

namespace firebrand::binding {
namespace {

GenerationOptions toGenerationOptions(const Napi::Value& value) {
  if (!value.IsObject() || value.IsArray())
    throw InvalidArgument("generate: options must be an object with maxNewTokens");
  const auto object = value.As<Napi::Object>();
  const auto given = [&](const char* name) { return !object.Get(name).IsUndefined(); };
  // Ranges are TokenGenerator's to check; here only types.
  const int64_t any = std::numeric_limits<int64_t>::min();
  GenerationOptions options;
  options.maxNewTokens = toInteger(object.Get("maxNewTokens"), "generate.maxNewTokens", any);
  if (given("temperature")) options.temperature = toNumber(object.Get("temperature"), "generate.temperature");
  if (given("topK")) options.topK = toInteger(object.Get("topK"), "generate.topK", any);
  if (given("topP")) options.topP = toNumber(object.Get("topP"), "generate.topP");
  if (given("greedy")) options.greedy = toBoolean(object.Get("greedy"), "generate.greedy");
  if (given("seed")) options.seed = static_cast<uint64_t>(toInteger(object.Get("seed"), "generate.seed", 0));
  if (given("kvCache")) options.kvCache = toBoolean(object.Get("kvCache"), "generate.kvCache");
  if (given("contextLength"))
    options.contextLength = toInteger(object.Get("contextLength"), "generate.contextLength", any);
  if (given("stopTokens")) {
    for (const double token : toNumbers(object.Get("stopTokens"), "generate.stopTokens"))
      options.stopTokens.push_back(static_cast<int64_t>(token));
  }
  return options;
}

Napi::Value generationHandle(Napi::Env env, std::shared_ptr<TokenGenerator> generator) {
  return Napi::External<std::shared_ptr<TokenGenerator>>::New(
      env, new std::shared_ptr<TokenGenerator>(std::move(generator)),
      [](Napi::Env, std::shared_ptr<TokenGenerator>* held) { delete held; });
}

std::shared_ptr<TokenGenerator> generationOf(const Napi::Value& handle) {
  if (!handle.IsExternal()) throw InvalidState("firebrand bug: a generation handle is not an External");
  return *handle.As<Napi::External<std::shared_ptr<TokenGenerator>>>().Data();
}

}  // namespace

Napi::Value startGeneration(const Napi::CallbackInfo& info, std::shared_ptr<Model> model, c10::Device device) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    if (!info[0].IsTypedArray()) throw InvalidArgument("generate: the prompt must be a TypedArray of token ids");
    const at::Tensor prompt =
        toTensor(info[0], {static_cast<int64_t>(info[0].As<Napi::TypedArray>().ElementLength())}, "prompt");
    return generationHandle(
        env, std::make_shared<TokenGenerator>(std::move(model), prompt, toGenerationOptions(info[1]), device));
  });
}

Napi::Value nextToken(const Napi::CallbackInfo& info, TaskThread& thread, PromiseSettlement::Settled settled,
                      bool betweenSteps) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    auto generator = generationOf(info[0]);
    return startOnThread(
        env, thread,
        [generator]() -> PromiseWorker::Finish {
          useRequestedThreads();
          const auto token = generator->next();
          return [token](Napi::Env env) {
            return token ? Napi::Value(Napi::Number::New(env, static_cast<double>(*token))) : env.Null();
          };
        },
        std::move(settled), betweenSteps);
  });
}

}  // namespace firebrand::binding

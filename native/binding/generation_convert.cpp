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
  if (!given("maxNewTokens")) {
    throw InvalidArgument(
        "generate.maxNewTokens: got nothing, expected an integer >= 1 (a checkpoint's generation_config.json "
        "may give it as max_new_tokens)");
  }
  options.maxNewTokens = toInteger(object.Get("maxNewTokens"), "generate.maxNewTokens", any);
  if (given("temperature")) options.temperature = toNumber(object.Get("temperature"), "generate.temperature");
  if (given("topK")) options.topK = toInteger(object.Get("topK"), "generate.topK", any);
  if (given("topP")) options.topP = toNumber(object.Get("topP"), "generate.topP");
  if (given("repetitionPenalty"))
    options.repetitionPenalty = toNumber(object.Get("repetitionPenalty"), "generate.repetitionPenalty");
  if (given("noRepeatNgramSize"))
    options.noRepeatNgramSize = toInteger(object.Get("noRepeatNgramSize"), "generate.noRepeatNgramSize", any);
  if (given("minP")) options.minP = toNumber(object.Get("minP"), "generate.minP");
  if (given("logprobs")) options.logprobs = toBoolean(object.Get("logprobs"), "generate.logprobs");
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
    if (!info[0].IsArray()) throw InvalidArgument("generate: the prompts must be an array of TypedArrays of token ids");
    const auto list = info[0].As<Napi::Array>();
    std::vector<at::Tensor> prompts;
    for (uint32_t i = 0; i < list.Length(); ++i) {
      const Napi::Value prompt = list.Get(i);
      const std::string name = "prompts[" + std::to_string(i) + "]";
      if (!prompt.IsTypedArray()) throw InvalidArgument("generate: " + name + " must be a TypedArray of token ids");
      prompts.push_back(toTensor(prompt, {static_cast<int64_t>(prompt.As<Napi::TypedArray>().ElementLength())}, name));
    }
    return generationHandle(
        env, std::make_shared<TokenGenerator>(std::move(model), prompts, toGenerationOptions(info[1]), device));
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
          auto tokens = generator->next();
          auto logprobs = generator->logprobs();
          return [tokens = std::move(tokens), logprobs = std::move(logprobs)](Napi::Env env) -> Napi::Value {
            if (tokens.empty()) return env.Null();
            const auto numbers = [env](const auto& values) {
              Napi::Array array = Napi::Array::New(env, values.size());
              for (size_t i = 0; i < values.size(); ++i) {
                array.Set(
                    static_cast<uint32_t>(i),
                    values[i] ? Napi::Value(Napi::Number::New(env, static_cast<double>(*values[i]))) : env.Null());
              }
              return array;
            };
            Napi::Object step = Napi::Object::New(env);
            step.Set("tokens", numbers(tokens));
            if (!logprobs.empty()) step.Set("logprobs", numbers(logprobs));
            return step;
          };
        },
        std::move(settled), betweenSteps);
  });
}

}  // namespace firebrand::binding

#include "binding/generation_convert.h"

#include "binding/convert.h"
#include "core/errors.h"

namespace firebrand::binding {

GenerationOptions toGenerationOptions(const Napi::Value& value) {
  if (!value.IsObject() || value.IsArray()) throw InvalidArgument("generate: options must be an object with maxNewTokens");
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
  if (given("contextLength")) options.contextLength = toInteger(object.Get("contextLength"), "generate.contextLength", any);
  if (given("stopTokens")) {
    for (const double token : toNumbers(object.Get("stopTokens"), "generate.stopTokens")) options.stopTokens.push_back(static_cast<int64_t>(token));
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

Napi::Value fromToken(Napi::Env env, std::optional<int64_t> token) {
  return token ? Napi::Value(Napi::Number::New(env, static_cast<double>(*token))) : env.Null();
}

}  // namespace firebrand::binding

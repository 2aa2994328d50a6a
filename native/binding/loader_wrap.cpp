#include "binding/loader_wrap.h"

#include <chrono>

#include "binding/addon_data.h"
#include "binding/convert.h"
#include "binding/promise_worker.h"
#include "core/errors.h"

namespace firebrand::binding {

void LoaderWrap::Export(Napi::Env env, Napi::Object exports) {
  Napi::Function cls = DefineClass(
      env, "NativeLoader",
      {InstanceMethod<&LoaderWrap::Next>("next"), InstanceMethod<&LoaderWrap::Drain>("drain"),
       InstanceMethod<&LoaderWrap::Close>("close"), InstanceAccessor<&LoaderWrap::BatchCount>("batchCount")});
  addonData(env).loader = Napi::Persistent(cls);
  exports.Set("NativeLoader", cls);
}

Napi::Object LoaderWrap::NewInstance(Napi::Env env, std::shared_ptr<DatasetLoader> loader) {
  return addonData(env).loader.New({Napi::External<std::shared_ptr<DatasetLoader>>::New(env, &loader)});
}

LoaderWrap::LoaderWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<LoaderWrap>(info) {
  if (info.Length() != 1 || !info[0].IsExternal()) {
    throw Napi::TypeError::New(info.Env(), "NativeLoader is made by Dataset.batches()");
  }
  loader_ = *info[0].As<Napi::External<std::shared_ptr<DatasetLoader>>>().Data();
}

std::function<void()> LoaderWrap::claim(const char* operation) { return lock_.claim(Value(), operation, "loader"); }

Napi::Value LoaderWrap::onPool(const Napi::CallbackInfo& info, const char* operation,
                               std::function<PromiseWorker::Finish(DatasetLoader&)> task) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    auto loader = loader_;
    return PromiseWorker::Start(
        env, [loader, task]() { return task(*loader); }, claim(operation));
  });
}

Napi::Value LoaderWrap::Next(const Napi::CallbackInfo& info) {
  return onPool(info, "next", [](DatasetLoader& loader) -> PromiseWorker::Finish {
    auto batch = std::make_shared<std::optional<Batch>>(loader.next());
    return [batch](Napi::Env env) -> Napi::Value {
      if (!*batch) return env.Undefined();
      auto fields = Napi::Object::New(env);
      for (const auto& [name, tensor] : (*batch)->fields) fields.Set(name, fromTensor(env, tensor));
      return fields;
    };
  });
}

Napi::Value LoaderWrap::Drain(const Napi::CallbackInfo& info) {
  return onPool(info, "drain", [](DatasetLoader& loader) -> PromiseWorker::Finish {
    const auto started = std::chrono::steady_clock::now();
    int64_t batches = 0;
    int64_t samples = 0;
    while (auto batch = loader.next()) {
      ++batches;
      samples += batch->size();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return [=](Napi::Env env) -> Napi::Value {
      auto result = Napi::Object::New(env);
      result.Set("batches", Napi::Number::New(env, static_cast<double>(batches)));
      result.Set("samples", Napi::Number::New(env, static_cast<double>(samples)));
      result.Set("seconds", Napi::Number::New(env, seconds));
      return result;
    };
  });
}

void LoaderWrap::Close(const Napi::CallbackInfo&) { loader_->close(); }

Napi::Value LoaderWrap::BatchCount(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(*loader_->batchCount()));
}

}  // namespace firebrand::binding

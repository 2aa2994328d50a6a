#include "binding/safetensors_exports.h"

#include "binding/convert.h"
#include "binding/js_errors.h"
#include "binding/promise_worker.h"
#include "binding/results.h"
#include "core/errors.h"
#include "core/io/safetensors_reader.h"
#include "core/io/safetensors_writer.h"
#include "core/model/weights.h"

namespace firebrand::binding {
namespace {

// (path) -> Promise<{ tensors: { name: { data, shape } }, metadata: { key: value } }>
Napi::Value LoadSafetensors(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const std::string path = toString(info[0], "path");
    return PromiseWorker::Start(env, [path]() -> PromiseWorker::Finish {
      auto file = std::make_shared<SafetensorsFile>(readSafetensors(path));
      return [file](Napi::Env env) -> Napi::Value {
        auto tensors = Napi::Object::New(env);
        for (const auto& [name, tensor] : file->tensors) tensors.Set(name, fromTensor(env, tensor));
        auto metadata = Napi::Object::New(env);
        for (const auto& [key, value] : file->metadata) metadata.Set(key, value);
        auto result = Napi::Object::New(env);
        result.Set("tensors", tensors);
        result.Set("metadata", metadata);
        return result;
      };
    });
  });
}

// (path) -> Promise<string[]>: the names of a weights file's tensors (.safetensors or TorchScript), for
// initWeightsFrom's map.
Napi::Value WeightNames(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const std::string path = toString(info[0], "path");
    return PromiseWorker::Start(env, [path]() -> PromiseWorker::Finish {
      std::vector<std::string> names;
      const auto weights = openWeightsFile(path);
      for (const auto& [name, shape] : weights->shapes()) names.push_back(name);
      return [names](Napi::Env env) -> Napi::Value { return toJs(env, names); };
    });
  });
}

// (path, { name: { data, shape } }, { key: value }?) -> Promise<void>, written atomically.
Napi::Value SaveSafetensors(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const std::string path = toString(info[0], "path");
    TensorDict tensors = toTensorDict(info[1], "tensors");
    std::map<std::string, std::string> metadata;
    if (!info[2].IsUndefined()) {
      if (!info[2].IsObject() || info[2].IsArray()) throw InvalidArgument("metadata must be an object of strings");
      const auto object = info[2].As<Napi::Object>();
      const Napi::Array keys = object.GetPropertyNames();
      for (uint32_t i = 0; i < keys.Length(); ++i) {
        const std::string key = keys.Get(i).ToString().Utf8Value();
        metadata[key] = toString(object.Get(key), "metadata." + key);
      }
    }
    return PromiseWorker::Start(env, [path, tensors, metadata]() -> PromiseWorker::Finish {
      writeSafetensors(path, tensors, metadata);
      return [](Napi::Env env) -> Napi::Value { return env.Undefined(); };
    });
  });
}

}  // namespace

void exportSafetensors(Napi::Env env, Napi::Object exports) {
  exports.Set("loadSafetensors", Napi::Function::New<LoadSafetensors>(env, "loadSafetensors"));
  exports.Set("saveSafetensors", Napi::Function::New<SaveSafetensors>(env, "saveSafetensors"));
  exports.Set("weightNames", Napi::Function::New<WeightNames>(env, "weightNames"));
}

}  // namespace firebrand::binding

#include "binding/dataset_wrap.h"

#include <limits>

#include "binding/addon_data.h"
#include "binding/config_convert.h"
#include "binding/convert.h"
#include "binding/js_errors.h"
#include "binding/loader_wrap.h"
#include "binding/promise_worker.h"
#include "core/data/archive_dataset.h"
#include "core/data/idx_dataset.h"
#include "core/data/npy_reader.h"
#include "core/data/token_file.h"
#include "core/data/token_windows.h"
#include "core/errors.h"

namespace firebrand::binding {
namespace {

Napi::FunctionReference* constructor(Napi::Env env) { return &addonData(env).dataset; }

}  // namespace

void DatasetWrap::Export(Napi::Env env, Napi::Object exports) {
  Napi::Function cls = DefineClass(
      env, "NativeDataset",
      {StaticMethod<&DatasetWrap::FromIdx>("fromIdx"), StaticMethod<&DatasetWrap::FromFields>("fromFields"),
       StaticMethod<&DatasetWrap::FromTokens>("fromTokens"), StaticMethod<&DatasetWrap::FromTokenFile>("fromTokenFile"),
       StaticMethod<&DatasetWrap::Allocate>("allocate"), StaticMethod<&DatasetWrap::FromNpy>("fromNpy"),
       StaticMethod<&DatasetWrap::FromNpz>("fromNpz"), StaticMethod<&DatasetWrap::FromSafetensors>("fromSafetensors"),
       InstanceAccessor<&DatasetWrap::Size>("size"), InstanceAccessor<&DatasetWrap::FieldShapes>("fieldShapes"),
       InstanceMethod<&DatasetWrap::Slice>("slice"), InstanceMethod<&DatasetWrap::Fields>("fields"),
       InstanceMethod<&DatasetWrap::BatchOrder>("batchOrder"), InstanceMethod<&DatasetWrap::Split>("split"),
       InstanceMethod<&DatasetWrap::Select>("select"), InstanceMethod<&DatasetWrap::WithFields>("withFields"),
       InstanceMethod<&DatasetWrap::WithTransforms>("withTransforms"), InstanceMethod<&DatasetWrap::Loader>("loader"),
       InstanceMethod<&DatasetWrap::WithSampleWeights>("withSampleWeights")});
  addonData(env).dataset = Napi::Persistent(cls);
  exports.Set("NativeDataset", cls);
}

DatasetWrap::DatasetWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<DatasetWrap>(info) {
  if (info.Length() != 1 || !info[0].IsExternal()) {
    throw Napi::TypeError::New(info.Env(), "NativeDataset is made by Dataset.fromIdx or Dataset.fromArrays");
  }
  dataset_ = *info[0].As<Napi::External<DatasetRef>>().Data();
}

Napi::Object DatasetWrap::NewInstance(Napi::Env env, DatasetRef dataset) {
  // The External lives only for the constructor call, which copies the reference.
  return constructor(env)->New({Napi::External<DatasetRef>::New(env, &dataset)});
}

Napi::Object DatasetWrap::NewInstance(Napi::Env env, TensorDataset dataset) {
  return NewInstance(env, DatasetRef{std::make_shared<const TensorDataset>(std::move(dataset)),
                                     std::make_shared<const BatchTransforms>()});
}

DatasetRef DatasetWrap::From(const Napi::Value& value, const std::string& field) {
  Napi::Env env = value.Env();
  if (!value.IsObject() || !value.As<Napi::Object>().InstanceOf(constructor(env)->Value())) {
    throw InvalidArgument(field + " must be a firebrand Dataset (Dataset.fromIdx, Dataset.fromArrays, ...)");
  }
  return Unwrap(value.As<Napi::Object>())->dataset_;
}

// Reads a dataset on libuv's pool and resolves with its JS handle.
Napi::Promise DatasetWrap::LoadAsync(Napi::Env env, std::function<TensorDataset()> load) {
  return PromiseWorker::Start(env, [load]() -> PromiseWorker::Finish {
    auto dataset = std::make_shared<TensorDataset>(load());
    return [dataset](Napi::Env env) -> Napi::Value { return NewInstance(env, *dataset); };
  });
}

Napi::Value DatasetWrap::FromIdx(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const std::string inputs = toString(info[0], "inputs");
    const std::string targets = toString(info[1], "targets");
    const IdxDatasetOptions options = idxDatasetOptions(toOptionMap(info[2], "Dataset.fromIdx options"));
    return LoadAsync(env, [=] { return loadIdxDataset(inputs, targets, options); });
  });
}

Napi::Value DatasetWrap::FromNpy(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const std::string inputs = toString(info[0], "inputs");
    const std::string targets = toString(info[1], "targets");
    return LoadAsync(env, [=] { return TensorDataset(readNpy(inputs), readNpy(targets)); });
  });
}

namespace {

// { input: 'x_train', target: 'y_train' } or undefined (every array).
FieldSelection toFieldSelection(const Napi::Value& value) {
  FieldSelection fields;
  if (value.IsUndefined()) return fields;
  if (!value.IsObject() || value.IsArray()) throw InvalidArgument("fields must be an object { field: arrayName }");
  const auto object = value.As<Napi::Object>();
  const Napi::Array names = object.GetPropertyNames();
  for (uint32_t i = 0; i < names.Length(); ++i) {
    const std::string field = names.Get(i).ToString().Utf8Value();
    fields[field] = toString(object.Get(field), "fields." + field);
  }
  return fields;
}

}  // namespace

// (path, fields?) -> a file of named arrays read by `load` on libuv's pool.
Napi::Value DatasetWrap::LoadNamedArrays(const Napi::CallbackInfo& info,
                                         TensorDataset (*load)(const std::string&, const FieldSelection&)) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const std::string path = toString(info[0], "path");
    const FieldSelection fields = toFieldSelection(info[1]);
    return LoadAsync(env, [=] { return load(path, fields); });
  });
}

Napi::Value DatasetWrap::FromNpz(const Napi::CallbackInfo& info) { return LoadNamedArrays(info, loadNpzDataset); }

Napi::Value DatasetWrap::FromSafetensors(const Napi::CallbackInfo& info) {
  return LoadNamedArrays(info, loadSafetensorsDataset);
}

namespace {

// { contextLength, stride?, separator?, packDocuments?, padToken?, ignoreIndex? } for `owner`
// (fromTokens, fromTokenFile). Ranges are tokenWindows' to check; here only integers.
TokenWindowOptions toTokenWindowOptions(const Napi::Value& value, const std::string& owner) {
  if (!value.IsObject()) throw InvalidArgument(owner + ": options must be an object with contextLength");
  const auto object = value.As<Napi::Object>();
  const auto optionalInteger = [&](const char* name, int64_t min) -> std::optional<int64_t> {
    if (object.Get(name).IsUndefined()) return std::nullopt;
    return toInteger(object.Get(name), owner + "." + name, min);
  };
  TokenWindowOptions options;
  options.owner = owner;
  const int64_t any = std::numeric_limits<int64_t>::min();
  options.contextLength = toInteger(object.Get("contextLength"), owner + ".contextLength", any);
  options.stride = optionalInteger("stride", any);
  options.separator = optionalInteger("separator", 0);
  if (!object.Get("packDocuments").IsUndefined())
    options.packDocuments = toBoolean(object.Get("packDocuments"), owner + ".packDocuments");
  options.padToken = optionalInteger("padToken", 0).value_or(options.padToken);
  options.ignoreIndex = optionalInteger("ignoreIndex", any).value_or(options.ignoreIndex);
  return options;
}

}  // namespace

// (documents: TypedArray[], TokenWindowOptions)
Napi::Value DatasetWrap::FromTokens(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    if (!info[0].IsArray())
      throw InvalidArgument("fromTokens: tokens must be a TypedArray or an array of them (documents)");
    const auto list = info[0].As<Napi::Array>();
    std::vector<at::Tensor> documents;
    for (uint32_t i = 0; i < list.Length(); ++i) {
      const Napi::Value document = list.Get(i);
      const std::string field = list.Length() == 1 ? "tokens" : "documents[" + std::to_string(i) + "]";
      if (!document.IsTypedArray())
        throw InvalidArgument("fromTokens: " + field + " must be a TypedArray of token ids");
      documents.push_back(
          toTensor(document, {static_cast<int64_t>(document.As<Napi::TypedArray>().ElementLength())}, field));
    }
    return NewInstance(env, tokenWindows(documents, toTokenWindowOptions(info[1], "fromTokens")));
  });
}

// (path, TokenWindowOptions & { dtype? }): read and windowed off the main thread.
Napi::Value DatasetWrap::FromTokenFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const std::string path = toString(info[0], "fromTokenFile: path");
    const TokenWindowOptions options = toTokenWindowOptions(info[1], "fromTokenFile");
    const Napi::Value dtype = info[1].As<Napi::Object>().Get("dtype");
    const std::string stored = dtype.IsUndefined() ? "uint16" : toString(dtype, "fromTokenFile.dtype");
    return LoadAsync(env, [=] { return tokenFileWindows(path, stored, options); });
  });
}

// { input: { data, shape }, target: { data, shape }, mask: ... }
Napi::Value DatasetWrap::FromFields(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value { return NewInstance(env, TensorDataset(toTensorDict(info[0], ""))); });
}

// { input: { dtype: 'float32', shape: [N, 784] }, ... } -> { dataset, arrays }: the
// arrays are views of the dataset's own memory, for JS to fill without a copy.
Napi::Value DatasetWrap::Allocate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    if (!info[0].IsObject() || info[0].IsArray())
      throw InvalidArgument("fields must be an object { name: { dtype, shape } }");
    const auto specs = info[0].As<Napi::Object>();
    const Napi::Array names = specs.GetPropertyNames();
    TensorDict tensors;
    for (uint32_t i = 0; i < names.Length(); ++i) {
      const std::string name = names.Get(i).ToString().Utf8Value();
      const Napi::Value spec = specs.Get(name);
      if (!spec.IsObject() || spec.IsArray()) throw InvalidArgument(name + " must be { dtype, shape }");
      const auto object = spec.As<Napi::Object>();
      tensors.emplace(name, emptyTensor(toString(object.Get("dtype"), name + ".dtype"),
                                        toShape(object.Get("shape"), name + ".shape"), name + ".dtype"));
    }
    TensorDataset dataset(tensors);
    auto arrays = Napi::Object::New(env);
    for (const auto& [name, tensor] : tensors) arrays.Set(name, sharedTypedArray(env, tensor));
    auto result = Napi::Object::New(env);
    result.Set("dataset", NewInstance(env, std::move(dataset)));
    result.Set("arrays", arrays);
    return result;
  });
}

Napi::Value DatasetWrap::Size(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(dataset_.data->size()));
}

// { input: [1, 28, 28], target: [] }: each field's shape per sample.
// An image dataset's input: from its read mode and transforms, -1 where only decoding would tell.
Napi::Value DatasetWrap::FieldShapes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    auto shapes = Napi::Object::New(env);
    if (dataset_.data->images() != nullptr) {
      shapes.Set(kInputField, fromShape(env, dataset_.data->sampleShape(kInputField)));
    }
    for (const auto& entry : dataset_.data->fields()) {
      shapes.Set(entry.first, fromShape(env, dataset_.data->sampleShape(entry.first)));
    }
    return shapes;
  });
}

Napi::Value DatasetWrap::Slice(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const int64_t start = toInteger(info[0], "start", 0);
    const int64_t end = toInteger(info[1], "end", 0);
    return NewInstance(env,
                       {std::make_shared<const TensorDataset>(dataset_.data->slice(start, end)), dataset_.transforms});
  });
}

// [{ name: 'normalize', mean: 0.28, std: 0.35 }, ...]: a handle on the same
// samples whose loader applies these transforms (replacing any before).
Napi::Value DatasetWrap::WithTransforms(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    if (!info[0].IsArray()) throw InvalidArgument("transforms must be an array of { name, ... }");
    const auto specs = info[0].As<Napi::Array>();
    auto transforms = std::make_shared<BatchTransforms>();
    for (uint32_t i = 0; i < specs.Length(); ++i) {
      const std::string owner = "transforms[" + std::to_string(i) + "]";
      const Napi::Value spec = specs.Get(i);
      if (!spec.IsObject() || spec.IsArray()) throw InvalidArgument(owner + " must be an object with a 'name'");
      const std::string name = toString(spec.As<Napi::Object>().Get("name"), owner + ".name");
      transforms->push_back(makeBatchTransform(i, name, toOptionMap(spec, owner, {"name"})));
    }
    return NewInstance(env, {dataset_.data, std::move(transforms)});
  });
}

// (weights: Float64Array | undefined ('balanced'), numSamples, replacement) -> a dataset drawn by weight in training.
Napi::Value DatasetWrap::WithSampleWeights(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    at::Tensor weights;
    if (!info[0].IsUndefined()) {
      const std::vector<double> values = toNumbers(info[0], "withSampleWeights weights");
      weights = at::tensor(values, at::TensorOptions().dtype(at::kDouble));
    }
    const int64_t numSamples = toInteger(info[1], "withSampleWeights numSamples", 1);
    const bool replacement = info[2].ToBoolean();
    auto data =
        std::make_shared<const TensorDataset>(dataset_.data->withSampleWeights(weights, numSamples, replacement));
    return NewInstance(env, {std::move(data), dataset_.transforms});
  });
}

Napi::Value DatasetWrap::BatchOrder(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const Napi::Object options = toObject(info[0], "batchOrder options");
    const BatchSampler sampler(dataset_.data->size(),
                               dataset_.data->trainingSampler(toSamplerOptions(options, "batchOrder options")),
                               toInteger(options.Get("epoch"), "batchOrder options.epoch", 0));
    auto batches = Napi::Array::New(env, sampler.batchCount());
    for (int64_t b = 0; b < sampler.batchCount(); ++b) {
      batches.Set(b, fromShape(env, sampler.indices(b).vec()));
    }
    return batches;
  });
}

Napi::Value DatasetWrap::Split(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const double trainFraction = toNumber(info[0], "split.train");
    const double validationFraction = toNumber(info[1], "split.validation");
    const auto seed = static_cast<uint64_t>(toInteger(info[2], "split.seed", 0));
    auto [train, validation] = dataset_.data->randomSplit({trainFraction, validationFraction}, seed);
    auto parts = Napi::Array::New(env, 2);
    parts.Set(0u, NewInstance(env, {std::make_shared<const TensorDataset>(std::move(train)), dataset_.transforms}));
    parts.Set(1u,
              NewInstance(env, {std::make_shared<const TensorDataset>(std::move(validation)), dataset_.transforms}));
    return parts;
  });
}

// (indices: number[]) -> the samples `indices`, in that order, as a dataset of their own.
Napi::Value DatasetWrap::Select(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    if (!info[0].IsArray()) throw InvalidArgument("select: indices must be an array of sample indices");
    const auto given = info[0].As<Napi::Array>();
    std::vector<int64_t> indices(given.Length());
    for (uint32_t i = 0; i < given.Length(); ++i) {
      indices[i] = toInteger(given.Get(i), "select: indices[" + std::to_string(i) + "]", 0);
      if (indices[i] >= dataset_.data->size()) {
        throw InvalidArgument("select: indices[" + std::to_string(i) + "] is " + std::to_string(indices[i]) +
                              ", past the dataset's " + std::to_string(dataset_.data->size()) + " samples");
      }
    }
    return NewInstance(env,
                       {std::make_shared<const TensorDataset>(dataset_.data->select(indices)), dataset_.transforms});
  });
}

// ({ name: { data, shape } }) -> the same samples with these fields in place of their own (or beside them).
Napi::Value DatasetWrap::WithFields(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const TensorDict replaced = toTensorDict(info[0], "fields");
    return NewInstance(
        env, {std::make_shared<const TensorDataset>(dataset_.data->withFields(replaced)), dataset_.transforms});
  });
}

// Copies of the fields as they are stored (before transforms), by name.
Napi::Value DatasetWrap::Fields(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    auto fields = Napi::Object::New(env);
    for (const auto& [name, tensor] : dataset_.data->fields()) fields.Set(name, fromTensor(env, tensor));
    return fields;
  });
}

// The batches of one epoch as training would load them: { batchSize, shuffle,
// dropLast, seed, epoch, startBatch, rank, worldSize, numWorkers, prefetchFactor }.
Napi::Value DatasetWrap::Loader(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const Napi::Object options = toObject(info[0], "loader options");
    const EpochSegment segment = toEpochSegment(options);
    return LoaderWrap::NewInstance(
        env,
        std::make_shared<DatasetLoader>(dataset_.data, *dataset_.transforms,
                                        dataset_.data->trainingSampler(toSamplerOptions(options, "loader options")),
                                        segment.epoch, segment.startBatch, toLoaderOptions(options, "loader options")));
  });
}

}  // namespace firebrand::binding

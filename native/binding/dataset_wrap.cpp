#include "binding/dataset_wrap.h"

#include "binding/convert.h"
#include "binding/js_errors.h"
#include "binding/promise_worker.h"
#include "core/data/csv_dataset.h"
#include "core/data/idx_dataset.h"
#include "core/data/npy_reader.h"
#include "core/train/epoch_options.h"
#include "core/errors.h"

namespace firebrand::binding {
namespace {

Napi::FunctionReference* constructor(Napi::Env env) {
  return env.GetInstanceData<Napi::FunctionReference>();
}

}  // namespace

void DatasetWrap::Export(Napi::Env env, Napi::Object exports) {
  Napi::Function cls = DefineClass(env, "NativeDataset",
                                   {StaticMethod<&DatasetWrap::FromIdx>("fromIdx"),
                                    StaticMethod<&DatasetWrap::FromArrays>("fromArrays"),
                                    StaticMethod<&DatasetWrap::FromNpy>("fromNpy"),
                                    StaticMethod<&DatasetWrap::FromCsv>("fromCsv"),
                                    InstanceAccessor<&DatasetWrap::Size>("size"),
                                    InstanceAccessor<&DatasetWrap::SampleShape>("sampleShape"),
                                    InstanceAccessor<&DatasetWrap::TargetShape>("targetShape"),
                                    InstanceMethod<&DatasetWrap::Slice>("slice"),
                                    InstanceMethod<&DatasetWrap::ToArrays>("toArrays"),
                                    InstanceMethod<&DatasetWrap::BatchOrder>("batchOrder"),
                                    InstanceMethod<&DatasetWrap::Split>("split")});
  auto* reference = new Napi::FunctionReference(Napi::Persistent(cls));
  env.SetInstanceData(reference);
  exports.Set("NativeDataset", cls);
}

DatasetWrap::DatasetWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<DatasetWrap>(info) {
  if (info.Length() != 1 || !info[0].IsExternal()) {
    throw Napi::TypeError::New(info.Env(), "NativeDataset is made by Dataset.fromIdx or Dataset.fromArrays");
  }
  dataset_ = *info[0].As<Napi::External<std::shared_ptr<const TensorDataset>>>().Data();
}

Napi::Object DatasetWrap::NewInstance(Napi::Env env, TensorDataset dataset) {
  auto shared = std::make_shared<const TensorDataset>(std::move(dataset));
  // The External lives only for the constructor call, which copies the pointer.
  return constructor(env)->New({Napi::External<std::shared_ptr<const TensorDataset>>::New(env, &shared)});
}

std::shared_ptr<const TensorDataset> DatasetWrap::From(const Napi::Value& value, const std::string& field) {
  Napi::Env env = value.Env();
  if (!value.IsObject() || !value.As<Napi::Object>().InstanceOf(constructor(env)->Value())) {
    throw InvalidArgument(field + " must be a firebrand Dataset (Dataset.fromIdx, Dataset.fromArrays)");
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

Napi::Value DatasetWrap::FromCsv(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const std::string path = toString(info[0], "path");
    const CsvOptions options = csvOptions(toOptionMap(info[1], "Dataset.fromCsv options"));
    return LoadAsync(env, [=] { return loadCsvDataset(path, options); });
  });
}

Napi::Value DatasetWrap::FromArrays(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    at::Tensor inputs = toTensor(info[0], toShape(info[1], "inputShape"), "inputs");
    at::Tensor targets = toTensor(info[2], toShape(info[3], "targetShape"), "targets");
    return NewInstance(env, TensorDataset(std::move(inputs), std::move(targets)));
  });
}

Napi::Value DatasetWrap::Size(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(dataset_->size()));
}

Napi::Value DatasetWrap::SampleShape(const Napi::CallbackInfo& info) {
  return fromShape(info.Env(), dataset_->sampleShape());
}

Napi::Value DatasetWrap::TargetShape(const Napi::CallbackInfo& info) {
  return fromShape(info.Env(), dataset_->targetShape());
}

Napi::Value DatasetWrap::Slice(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const int64_t start = toInteger(info[0], "start", 0);
    const int64_t end = toInteger(info[1], "end", 0);
    return NewInstance(env, dataset_->slice(start, end));
  });
}

Napi::Value DatasetWrap::BatchOrder(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const EpochOptions options = epochOptions(toOptionMap(info[0], "batchOrder options"));
    const BatchSampler sampler(dataset_->size(), options.sampler, options.epoch);
    auto batches = Napi::Array::New(env, sampler.batchCount());
    for (int64_t b = 0; b < sampler.batchCount(); ++b) {
      const at::Tensor indices = sampler.indices(b).contiguous();
      const int64_t* first = indices.data_ptr<int64_t>();
      batches.Set(b, fromShape(env, std::vector<int64_t>(first, first + indices.numel())));
    }
    return batches;
  });
}

Napi::Value DatasetWrap::Split(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const double fraction = toNumber(info[0], "fraction");
    const auto seed = static_cast<uint64_t>(toInteger(info[1], "seed", 0));
    auto [train, validation] = dataset_->randomSplit(fraction, seed);
    auto parts = Napi::Array::New(env, 2);
    parts.Set(0u, NewInstance(env, std::move(train)));
    parts.Set(1u, NewInstance(env, std::move(validation)));
    return parts;
  });
}

Napi::Value DatasetWrap::ToArrays(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    auto arrays = Napi::Object::New(env);
    arrays.Set("inputs", fromTensor(env, dataset_->inputs()));
    arrays.Set("targets", fromTensor(env, dataset_->targets()));
    return arrays;
  });
}

}  // namespace firebrand::binding

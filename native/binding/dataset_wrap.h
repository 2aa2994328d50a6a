// JS handle of a core TensorDataset. The tensors are shared with running
// workers through shared_ptr, so a dataset can be dropped in JS mid-epoch.
#pragma once
#include <napi.h>

#include <functional>
#include <memory>

#include "core/data/tensor_dataset.h"

namespace firebrand::binding {

class DatasetWrap : public Napi::ObjectWrap<DatasetWrap> {
 public:
  static void Export(Napi::Env env, Napi::Object exports);
  static Napi::Object NewInstance(Napi::Env env, TensorDataset dataset);
  // The dataset behind a JS value, or a JS error naming `field`.
  static std::shared_ptr<const TensorDataset> From(const Napi::Value& value, const std::string& field);

  explicit DatasetWrap(const Napi::CallbackInfo& info);

 private:
  static Napi::Value FromIdx(const Napi::CallbackInfo& info);
  static Napi::Value FromArrays(const Napi::CallbackInfo& info);
  static Napi::Value FromNpy(const Napi::CallbackInfo& info);
  static Napi::Value FromCsv(const Napi::CallbackInfo& info);
  static Napi::Promise LoadAsync(Napi::Env env, std::function<TensorDataset()> load);
  Napi::Value Size(const Napi::CallbackInfo& info);
  Napi::Value SampleShape(const Napi::CallbackInfo& info);
  Napi::Value TargetShape(const Napi::CallbackInfo& info);
  Napi::Value Slice(const Napi::CallbackInfo& info);
  Napi::Value ToArrays(const Napi::CallbackInfo& info);
  Napi::Value BatchOrder(const Napi::CallbackInfo& info);
  Napi::Value Split(const Napi::CallbackInfo& info);

  std::shared_ptr<const TensorDataset> dataset_;
};

}  // namespace firebrand::binding

// JS handle of a core TensorDataset and the batch transforms its loader
// applies. Both are shared with running workers through shared_ptr, so a
// dataset can be dropped in JS mid-epoch.
#pragma once
#include <napi.h>

#include <functional>
#include <memory>

#include "core/data/archive_dataset.h"
#include "core/data/batch_transforms.h"
#include "core/data/tensor_dataset.h"

namespace firebrand::binding {

struct DatasetRef {
  std::shared_ptr<const TensorDataset> data;
  std::shared_ptr<const BatchTransforms> transforms;
};

class DatasetWrap : public Napi::ObjectWrap<DatasetWrap> {
 public:
  static void Export(Napi::Env env, Napi::Object exports);
  static Napi::Object NewInstance(Napi::Env env, DatasetRef dataset);
  static Napi::Object NewInstance(Napi::Env env, TensorDataset dataset);
  // The dataset behind a JS value, or a JS error naming `field`.
  static DatasetRef From(const Napi::Value& value, const std::string& field);

  explicit DatasetWrap(const Napi::CallbackInfo& info);

 private:
  static Napi::Value FromIdx(const Napi::CallbackInfo& info);
  static Napi::Value FromFields(const Napi::CallbackInfo& info);
  static Napi::Value FromTokens(const Napi::CallbackInfo& info);
  static Napi::Value FromTokenFile(const Napi::CallbackInfo& info);
  static Napi::Value Allocate(const Napi::CallbackInfo& info);
  static Napi::Value FromNpy(const Napi::CallbackInfo& info);
  static Napi::Value FromNpz(const Napi::CallbackInfo& info);
  static Napi::Value FromSafetensors(const Napi::CallbackInfo& info);
  static Napi::Promise LoadAsync(Napi::Env env, std::function<TensorDataset()> load);
  static Napi::Value LoadNamedArrays(const Napi::CallbackInfo& info,
                                     TensorDataset (*load)(const std::string&, const FieldSelection&));
  Napi::Value Size(const Napi::CallbackInfo& info);
  Napi::Value FieldShapes(const Napi::CallbackInfo& info);
  Napi::Value Slice(const Napi::CallbackInfo& info);
  Napi::Value Fields(const Napi::CallbackInfo& info);
  Napi::Value BatchOrder(const Napi::CallbackInfo& info);
  Napi::Value WithSampleWeights(const Napi::CallbackInfo& info);
  Napi::Value Split(const Napi::CallbackInfo& info);
  Napi::Value Select(const Napi::CallbackInfo& info);
  Napi::Value WithFields(const Napi::CallbackInfo& info);
  Napi::Value WithTransforms(const Napi::CallbackInfo& info);
  Napi::Value Loader(const Napi::CallbackInfo& info);

  DatasetRef dataset_;
};

}  // namespace firebrand::binding

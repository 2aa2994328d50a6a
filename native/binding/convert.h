// Conversions between JavaScript values and the core's C++ types. Each takes
// the name of the field it reads, so a wrong value is reported by name.
#pragma once
#include <ATen/core/Tensor.h>
#include <napi.h>

#include <cstdint>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "core/model/model_source.h"
#include "core/nn/layer_spec.h"
#include "core/options/option_value.h"
#include "core/output_layout.h"
#include "core/tensor_dict.h"

namespace firebrand::binding {

// Fields of a plain JS object; undefined fields and those in `skip` are left out.
OptionMap toOptionMap(const Napi::Value& value, const std::string& owner, const std::set<std::string>& skip = {});
std::vector<std::string> toStrings(const Napi::Value& value, const std::string& field);
std::vector<double> toNumbers(const Napi::Value& value, const std::string& field);
// [{ type: 'linear', inFeatures: 784, ... }, ...]
// { type: 'sequential', layers } | { type: 'torchscript', path } | { type: 'script', source, parameters }
ModelSource toModelSource(const Napi::Value& value);

std::string toString(const Napi::Value& value, const std::string& field);
int64_t toInteger(const Napi::Value& value, const std::string& field, int64_t min);
double toNumber(const Napi::Value& value, const std::string& field);
bool toBoolean(const Napi::Value& value, const std::string& field);
std::vector<int64_t> toShape(const Napi::Value& value, const std::string& field);

// A copy of a TypedArray as a tensor of the given full shape (samples first).
at::Tensor toTensor(const Napi::Value& value, const std::vector<int64_t>& shape, const std::string& field);
// { name: { data: TypedArray, shape: number[] }, ... } -> tensors by name (copies).
// Errors name "<field>.<name>", or just the name when `field` is empty.
TensorDict toTensorDict(const Napi::Value& value, const std::string& field);
// predict's inputs: a TypedArray of the full shape `shape`, or (shape undefined) { name: { data, shape } }
// for a model that takes several inputs by name.
using PredictionInputs = std::variant<at::Tensor, TensorDict>;
PredictionInputs toPredictionInputs(const Napi::Value& inputs, const Napi::Value& shape);
// { data: <TypedArray of the tensor's dtype>, shape: number[] }
Napi::Object fromTensor(Napi::Env env, const at::Tensor& tensor);
// A model's outputs as its forward returned them: one tensor, an array or an object of tensors.
Napi::Value fromOutputs(Napi::Env env, const OutputLayout& layout, const std::vector<at::Tensor>& outputs);

// A TypedArray over the memory of a contiguous CPU tensor of a TypedArray dtype:
// no copy. The ArrayBuffer keeps the tensor's storage alive until it is collected.
Napi::Value sharedTypedArray(Napi::Env env, const at::Tensor& tensor);
// A new tensor of `shape` whose dtype is named as its TypedArray's ("float32", "int64", ...).
at::Tensor emptyTensor(const std::string& dtype, const std::vector<int64_t>& shape, const std::string& field);

Napi::Array fromShape(Napi::Env env, const std::vector<int64_t>& shape);

}  // namespace firebrand::binding

#include "binding/convert.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstring>

#include "core/errors.h"
#include "core/shape_text.h"

namespace firebrand::binding {
namespace {

std::string jsTypeName(const Napi::Value& value) {
  if (value.IsNull()) return "null";
  if (value.IsArray()) return "an array";
  if (value.IsTypedArray()) return "a TypedArray";
  switch (value.Type()) {
    case napi_undefined:
      return "undefined";
    case napi_boolean:
      return "a boolean";
    case napi_number:
      return "a number";
    case napi_string:
      return "a string";
    case napi_function:
      return "a function";
    case napi_bigint:
      return "a bigint";
    default:
      return "an object";
  }
}

[[noreturn]] void wrongType(const std::string& field, const std::string& expected, const Napi::Value& value) {
  throw InvalidArgument(field + " must be " + expected + ", got " + jsTypeName(value));
}

struct TypedArrayKind {
  napi_typedarray_type js;
  at::ScalarType torch;
  const char* name;
};

constexpr TypedArrayKind kTypedArrayKinds[] = {
    {napi_float32_array, at::kFloat, "Float32Array"}, {napi_float64_array, at::kDouble, "Float64Array"},
    {napi_int32_array, at::kInt, "Int32Array"},       {napi_bigint64_array, at::kLong, "BigInt64Array"},
    {napi_int16_array, at::kShort, "Int16Array"},     {napi_int8_array, at::kChar, "Int8Array"},
    {napi_uint8_array, at::kByte, "Uint8Array"},
};

// The TypedArray kind holding a dtype, or nullptr.
const TypedArrayKind* kindOf(at::ScalarType dtype) {
  for (const auto& candidate : kTypedArrayKinds) {
    if (candidate.torch == dtype) return &candidate;
  }
  return nullptr;
}

}  // namespace

std::string toString(const Napi::Value& value, const std::string& field) {
  if (!value.IsString()) wrongType(field, "a string", value);
  return value.As<Napi::String>().Utf8Value();
}

double toNumber(const Napi::Value& value, const std::string& field) {
  if (!value.IsNumber()) wrongType(field, "a number", value);
  return value.As<Napi::Number>().DoubleValue();
}

bool toBoolean(const Napi::Value& value, const std::string& field) {
  if (!value.IsBoolean()) wrongType(field, "true or false", value);
  return value.As<Napi::Boolean>().Value();
}

int64_t toInteger(const Napi::Value& value, const std::string& field, int64_t min) {
  const double number = toNumber(value, field);
  if (!std::isfinite(number) || number != std::floor(number) || number < static_cast<double>(min) ||
      std::fabs(number) > 9007199254740991.0) {
    throw InvalidArgument(field + " must be an integer >= " + std::to_string(min) + ", got " + formatNumber(number));
  }
  return static_cast<int64_t>(number);
}

std::vector<int64_t> toShape(const Napi::Value& value, const std::string& field) {
  if (!value.IsArray()) wrongType(field, "an array of sizes", value);
  const auto array = value.As<Napi::Array>();
  std::vector<int64_t> shape;
  for (uint32_t i = 0; i < array.Length(); ++i) {
    shape.push_back(toInteger(array.Get(i), field + "[" + std::to_string(i) + "]", 0));
  }
  return shape;
}

std::vector<std::string> toStrings(const Napi::Value& value, const std::string& field) {
  if (!value.IsArray()) wrongType(field, "an array of strings", value);
  const auto array = value.As<Napi::Array>();
  std::vector<std::string> strings;
  for (uint32_t i = 0; i < array.Length(); ++i) {
    strings.push_back(toString(array.Get(i), field + "[" + std::to_string(i) + "]"));
  }
  return strings;
}

std::vector<double> toNumbers(const Napi::Value& value, const std::string& field) {
  if (!value.IsArray()) wrongType(field, "an array of numbers", value);
  const auto array = value.As<Napi::Array>();
  std::vector<double> numbers;
  for (uint32_t i = 0; i < array.Length(); ++i) {
    numbers.push_back(toNumber(array.Get(i), field + "[" + std::to_string(i) + "]"));
  }
  return numbers;
}

OptionMap toOptionMap(const Napi::Value& value, const std::string& owner, const std::set<std::string>& skip) {
  OptionMap options;
  if (value.IsUndefined() || value.IsNull()) return options;
  if (!value.IsObject() || value.IsArray()) wrongType(owner, "an object of options", value);
  const auto object = value.As<Napi::Object>();
  const auto names = object.GetPropertyNames();
  for (uint32_t i = 0; i < names.Length(); ++i) {
    const std::string name = names.Get(i).As<Napi::String>().Utf8Value();
    const Napi::Value field = object.Get(name);
    const std::string fieldName = owner + ": field '" + name + "'";
    if (field.IsUndefined() || skip.count(name)) continue;
    if (field.IsBoolean()) {
      options[name] = field.As<Napi::Boolean>().Value();
    } else if (field.IsNumber()) {
      options[name] = field.As<Napi::Number>().DoubleValue();
    } else if (field.IsString()) {
      options[name] = field.As<Napi::String>().Utf8Value();
    } else if (field.IsArray()) {
      const auto array = field.As<Napi::Array>();
      std::vector<double> numbers;
      for (uint32_t j = 0; j < array.Length(); ++j) {
        numbers.push_back(toNumber(array.Get(j), fieldName + "[" + std::to_string(j) + "]"));
      }
      options[name] = std::move(numbers);
    } else {
      wrongType(fieldName, "a number, boolean, string or list of numbers", field);
    }
  }
  return options;
}

at::Tensor toTensor(const Napi::Value& value, const std::vector<int64_t>& shape, const std::string& field) {
  if (!value.IsTypedArray()) {
    wrongType(field, "a TypedArray (Float32Array, Float64Array, Int32Array, BigInt64Array, Uint8Array, ...)", value);
  }
  const auto array = value.As<Napi::TypedArray>();
  const TypedArrayKind* kind = nullptr;
  for (const auto& candidate : kTypedArrayKinds) {
    if (candidate.js == array.TypedArrayType()) kind = &candidate;
  }
  if (!kind) {
    throw InvalidArgument(field +
                          ": this TypedArray type is not supported; use Float32Array, Float64Array, "
                          "Int32Array, BigInt64Array, Int16Array, Int8Array or Uint8Array");
  }
  const int64_t expected = c10::multiply_integers(shape);
  if (static_cast<int64_t>(array.ElementLength()) != expected) {
    throw ShapeMismatch(field + ": shape " + shapeText(shape) + " needs " + std::to_string(expected) +
                        " values but the " + kind->name + " holds " + std::to_string(array.ElementLength()));
  }
  // A copy: the JS array may be changed or collected while training runs.
  at::Tensor tensor = at::empty(shape, at::TensorOptions().dtype(kind->torch));
  const auto* source = static_cast<const uint8_t*>(array.ArrayBuffer().Data()) + array.ByteOffset();
  std::memcpy(tensor.data_ptr(), source, array.ByteLength());
  return tensor;
}

TensorDict toTensorDict(const Napi::Value& value, const std::string& field) {
  if (!value.IsObject() || value.IsArray()) {
    throw InvalidArgument(field + " must be an object { name: { data, shape }, ... }");
  }
  const auto object = value.As<Napi::Object>();
  const Napi::Array names = object.GetPropertyNames();
  TensorDict tensors;
  for (uint32_t i = 0; i < names.Length(); ++i) {
    const std::string name = names.Get(i).ToString().Utf8Value();
    const std::string owner = field.empty() ? name : field + "." + name;
    const Napi::Value entry = object.Get(name);
    if (entry.IsUndefined()) continue;
    if (!entry.IsObject() || entry.IsArray())
      throw InvalidArgument(owner + " must be { data: TypedArray, shape: number[] }");
    const auto tensorData = entry.As<Napi::Object>();
    tensors.emplace(
        name, toTensor(tensorData.Get("data"), toShape(tensorData.Get("shape"), owner + ".shape"), owner + ".data"));
  }
  return tensors;
}

PredictionInputs toPredictionInputs(const Napi::Value& inputs, const Napi::Value& shape) {
  if (shape.IsUndefined()) return toTensorDict(inputs, "inputs");
  return toTensor(inputs, toShape(shape, "inputShape"), "inputs");
}

Napi::Value sharedTypedArray(Napi::Env env, const at::Tensor& tensor) {
  const TypedArrayKind* kind = kindOf(tensor.scalar_type());
  if (!kind || !tensor.is_contiguous() || !tensor.device().is_cpu()) {
    throw InvalidArgument("internal: tensor " + shapeAndDtypeText(tensor) + " cannot be shared as a TypedArray");
  }
  const size_t bytes = static_cast<size_t>(tensor.numel()) * tensor.element_size();
  Napi::ArrayBuffer buffer =
      bytes == 0 ? Napi::ArrayBuffer::New(env, 0)
                 : Napi::ArrayBuffer::New(
                       env, tensor.data_ptr(), bytes, [](Napi::Env, void*, at::Tensor* owner) { delete owner; },
                       new at::Tensor(tensor));
  napi_value typedArray = nullptr;
  NAPI_THROW_IF_FAILED(
      env, napi_create_typedarray(env, kind->js, static_cast<size_t>(tensor.numel()), buffer, 0, &typedArray),
      Napi::Value());
  return Napi::Value(env, typedArray);
}

at::Tensor emptyTensor(const std::string& dtype, const std::vector<int64_t>& shape, const std::string& field) {
  static const std::pair<const char*, at::ScalarType> kNames[] = {
      {"float32", at::kFloat}, {"float64", at::kDouble}, {"int32", at::kInt}, {"int64", at::kLong},
      {"int16", at::kShort},   {"int8", at::kChar},      {"uint8", at::kByte}};
  for (const auto& [name, type] : kNames) {
    if (dtype == name) return at::zeros(shape, at::TensorOptions().dtype(type));
  }
  throw InvalidArgument(field + " must be one of float32, float64, int32, int64, int16, int8, uint8, got '" + dtype +
                        "'");
}

// { type: 'graph', ... } (src/nn/model-spec.ts traces modules and sequential models) |
// { type: 'torchscript', path } | { type: 'script', source, parameters: [{ name, data, shape }] }
ModelSource toModelSource(const Napi::Value& value) {
  if (!value.IsObject())
    throw InvalidArgument("model must be nn.sequential(...), nn.torchScript(path) or nn.script(...)");
  const auto object = value.As<Napi::Object>();
  const std::string type = toString(object.Get("type"), "model.type");
  ModelSource source;
  if (type == "graph") {
    const auto stringify = value.Env().Global().Get("JSON").As<Napi::Object>().Get("stringify").As<Napi::Function>();
    source.graphDescription = stringify.Call({value}).As<Napi::String>().Utf8Value();
  } else if (type == "torchscript") {
    source.torchScriptFile = toString(object.Get("path"), "model.path");
  } else if (type == "script") {
    source.torchScriptSource = toString(object.Get("source"), "model.source");
    const Napi::Value parameters = object.Get("parameters");
    if (!parameters.IsArray()) throw InvalidArgument("model.parameters must be an array of { name, data, shape }");
    const auto array = parameters.As<Napi::Array>();
    for (uint32_t i = 0; i < array.Length(); ++i) {
      const std::string field = "model.parameters[" + std::to_string(i) + "]";
      if (!array.Get(i).IsObject()) throw InvalidArgument(field + " must be { name, data, shape }");
      const auto parameter = array.Get(i).As<Napi::Object>();
      const std::string name = toString(parameter.Get("name"), field + ".name");
      source.parameters.push_back(
          {name, toTensor(parameter.Get("data"), toShape(parameter.Get("shape"), field + ".shape"), field + ".data")});
    }
  } else {
    throw InvalidArgument("model.type must be 'graph', 'torchscript' or 'script', got '" + type + "'");
  }
  return source;
}

Napi::Array fromShape(Napi::Env env, const std::vector<int64_t>& shape) {
  auto array = Napi::Array::New(env, shape.size());
  for (size_t i = 0; i < shape.size(); ++i) array.Set(i, Napi::Number::New(env, static_cast<double>(shape[i])));
  return array;
}

Napi::Object fromTensor(Napi::Env env, const at::Tensor& source) {
  const at::Tensor tensor = source.to(at::kCPU).contiguous();
  const TypedArrayKind* kind = kindOf(tensor.scalar_type());
  if (!kind) kind = &kTypedArrayKinds[0];
  // Half, bfloat16 and other dtypes without a TypedArray come back as float32.
  const at::Tensor data = tensor.scalar_type() == kind->torch ? tensor : tensor.to(kind->torch);
  const size_t bytes = static_cast<size_t>(data.numel()) * data.element_size();
  auto buffer = Napi::ArrayBuffer::New(env, bytes);
  std::memcpy(buffer.Data(), data.data_ptr(), bytes);
  napi_value typedArray = nullptr;
  NAPI_THROW_IF_FAILED(env,
                       napi_create_typedarray(env, kind->js, static_cast<size_t>(data.numel()), buffer, 0, &typedArray),
                       Napi::Object());
  auto result = Napi::Object::New(env);
  result.Set("data", Napi::Value(env, typedArray));
  result.Set("shape", fromShape(env, data.sizes().vec()));
  return result;
}

Napi::Value fromOutputs(Napi::Env env, const OutputLayout& layout, const std::vector<at::Tensor>& outputs) {
  switch (layout.kind) {
    case OutputLayout::Kind::Tensor:
      return fromTensor(env, outputs.at(0));
    case OutputLayout::Kind::Array: {
      auto array = Napi::Array::New(env, outputs.size());
      for (size_t i = 0; i < outputs.size(); ++i) array.Set(static_cast<uint32_t>(i), fromTensor(env, outputs[i]));
      return array;
    }
    case OutputLayout::Kind::Object: {
      auto object = Napi::Object::New(env);
      for (size_t i = 0; i < outputs.size(); ++i) object.Set(layout.names.at(i), fromTensor(env, outputs[i]));
      return object;
    }
  }
  return env.Undefined();
}

}  // namespace firebrand::binding

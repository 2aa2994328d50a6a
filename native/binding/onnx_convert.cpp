#include "binding/onnx_convert.h"

#include "binding/convert.h"
#include "binding/image_exports.h"
#include "core/errors.h"

namespace firebrand::binding {
namespace {

Napi::Array strings(Napi::Env env, const std::vector<std::string>& values) {
  auto array = Napi::Array::New(env, values.size());
  for (size_t i = 0; i < values.size(); ++i) array.Set(i, values[i]);
  return array;
}

template <typename Number>
Napi::Array numbers(Napi::Env env, const std::vector<Number>& values) {
  auto array = Napi::Array::New(env, values.size());
  for (size_t i = 0; i < values.size(); ++i) array.Set(i, static_cast<double>(values[i]));
  return array;
}

// Each attribute with its kind, the AttributeProto field it fills.
Napi::Object attribute(Napi::Env env, const OnnxAttribute& attribute) {
  auto object = Napi::Object::New(env);
  object.Set("name", attribute.name);
  std::visit(
      [&](const auto& value) {
        using Value = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<Value, int64_t>) {
          object.Set("kind", "int");
          object.Set("value", static_cast<double>(value));
        } else if constexpr (std::is_same_v<Value, double>) {
          object.Set("kind", "float");
          object.Set("value", value);
        } else if constexpr (std::is_same_v<Value, std::string>) {
          object.Set("kind", "string");
          object.Set("value", value);
        } else if constexpr (std::is_same_v<Value, std::vector<int64_t>>) {
          object.Set("kind", "ints");
          object.Set("value", numbers(env, value));
        } else if constexpr (std::is_same_v<Value, std::vector<double>>) {
          object.Set("kind", "floats");
          object.Set("value", numbers(env, value));
        } else {
          object.Set("kind", "strings");
          object.Set("value", strings(env, value));
        }
      },
      attribute.value);
  return object;
}

Napi::Object valueInfo(Napi::Env env, const OnnxValueInfo& info) {
  auto object = Napi::Object::New(env);
  object.Set("name", info.name);
  object.Set("dataType", static_cast<double>(onnxDataType(info.dtype)));
  auto dims = Napi::Array::New(env, info.dims.size());
  for (size_t i = 0; i < info.dims.size(); ++i) {
    const OnnxDim& dim = info.dims[i];
    dims.Set(i, !dim.name.empty() ? Napi::Value(Napi::String::New(env, dim.name))
                : dim.size >= 0   ? Napi::Value(Napi::Number::New(env, static_cast<double>(dim.size)))
                                  : env.Null());
  }
  object.Set("dims", dims);
  return object;
}

}  // namespace

OnnxExportOptions toOnnxExportOptions(const Napi::Value& value) {
  if (!value.IsObject()) throw InvalidArgument("exportOnnx: options must be an object");
  const auto object = value.As<Napi::Object>();
  OnnxExportOptions options;
  options.opset = toInteger(object.Get("opset"), "opset", 1);
  const Napi::Value axes = object.Get("dynamicAxes");
  if (!axes.IsObject()) throw InvalidArgument("exportOnnx: dynamicAxes must be an object");
  const auto byName = axes.As<Napi::Object>();
  const Napi::Array names = byName.GetPropertyNames();
  for (uint32_t i = 0; i < names.Length(); ++i) {
    const std::string name = names.Get(i).ToString().Utf8Value();
    const Napi::Value labels = byName.Get(name);
    if (!labels.IsObject()) throw InvalidArgument("exportOnnx: dynamicAxes." + name + " must be { axis: label }");
    const auto byAxis = labels.As<Napi::Object>();
    const Napi::Array axisKeys = byAxis.GetPropertyNames();
    for (uint32_t j = 0; j < axisKeys.Length(); ++j) {
      const std::string key = axisKeys.Get(j).ToString().Utf8Value();
      options.dynamicAxes[name][std::stoll(key)] = toString(byAxis.Get(key), "dynamicAxes." + name + "." + key);
    }
  }
  const Napi::Value images = object.Get("imageTransforms");
  if (!images.IsUndefined()) options.rawImages = toImageTransforms(images, "imageTransforms");
  return options;
}

Napi::Object fromOnnxGraph(Napi::Env env, const OnnxGraph& graph) {
  auto nodes = Napi::Array::New(env, graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const OnnxNode& node = graph.nodes[i];
    auto object = Napi::Object::New(env);
    object.Set("opType", node.opType);
    object.Set("name", node.name);
    object.Set("inputs", strings(env, node.inputs));
    object.Set("outputs", strings(env, node.outputs));
    auto attributes = Napi::Array::New(env, node.attributes.size());
    for (size_t j = 0; j < node.attributes.size(); ++j) attributes.Set(j, attribute(env, node.attributes[j]));
    object.Set("attributes", attributes);
    nodes.Set(i, object);
  }
  auto initializers = Napi::Array::New(env, graph.initializers.size());
  for (size_t i = 0; i < graph.initializers.size(); ++i) {
    const auto& [name, tensor] = graph.initializers[i];
    auto object = Napi::Object::New(env);
    object.Set("name", name);
    object.Set("dataType", static_cast<double>(onnxDataType(tensor.scalar_type())));
    object.Set("dims", numbers(env, tensor.sizes().vec()));
    object.Set("data", Napi::Buffer<uint8_t>::Copy(env, static_cast<const uint8_t*>(tensor.data_ptr()),
                                                   static_cast<size_t>(tensor.numel()) * tensor.element_size()));
    initializers.Set(i, object);
  }
  auto inputs = Napi::Array::New(env, graph.inputs.size());
  for (size_t i = 0; i < graph.inputs.size(); ++i) inputs.Set(i, valueInfo(env, graph.inputs[i]));
  auto outputs = Napi::Array::New(env, graph.outputs.size());
  for (size_t i = 0; i < graph.outputs.size(); ++i) outputs.Set(i, valueInfo(env, graph.outputs[i]));
  auto result = Napi::Object::New(env);
  result.Set("opset", static_cast<double>(graph.opset));
  result.Set("nodes", nodes);
  result.Set("initializers", initializers);
  result.Set("inputs", inputs);
  result.Set("outputs", outputs);
  return result;
}

}  // namespace firebrand::binding

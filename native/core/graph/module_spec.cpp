#include "core/graph/module_spec.h"

#include <algorithm>
#include <iterator>

#include "core/errors.h"

namespace firebrand {
namespace {

[[noreturn]] void malformed(const std::string& where, const char* expected) {
  throw InvalidState("firebrand bug: the traced model's " + where + " is not " + expected);
}

const JsonValue& member(const JsonObject& object, const std::string& name, const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end()) malformed(where + "." + name, "present");
  return it->second;
}

const JsonObject& objectOf(const JsonValue& value, const std::string& where) {
  if (!value.object()) malformed(where, "an object");
  return *value.object();
}

const JsonArray& arrayOf(const JsonValue& value, const std::string& where) {
  if (!value.array()) malformed(where, "an array");
  return *value.array();
}

const std::string& stringOf(const JsonValue& value, const std::string& where) {
  if (!value.string()) malformed(where, "a string");
  return *value.string();
}

double numberOf(const JsonValue& value, const std::string& where) {
  if (const auto* integer = value.integer()) return static_cast<double>(*integer);
  if (const auto* number = std::get_if<double>(&value.value)) return *number;
  malformed(where, "a number");
}

std::vector<int64_t> integersOf(const JsonValue& value, const std::string& where) {
  std::vector<int64_t> out;
  for (const auto& item : arrayOf(value, where)) {
    if (!item.integer()) malformed(where, "a list of integers");
    out.push_back(*item.integer());
  }
  return out;
}

OptionValue optionOf(const JsonValue& value, const std::string& where) {
  if (const auto* flag = std::get_if<bool>(&value.value)) return *flag;
  if (const auto* text = value.string()) return *text;
  if (value.array()) {
    std::vector<double> numbers;
    for (const auto& item : *value.array()) numbers.push_back(numberOf(item, where));
    return numbers;
  }
  return numberOf(value, where);
}

OptionMap optionsOf(const JsonObject& object, const std::string& where, const char* skip) {
  OptionMap options;
  for (const auto& [name, value] : object) {
    if (name != skip) options[name] = optionOf(value, where + "." + name);
  }
  return options;
}

StateTensorSpec stateTensor(const JsonValue& value, const std::string& where, bool parameter) {
  const auto& object = objectOf(value, where);
  StateTensorSpec spec;
  spec.name = stringOf(member(object, "name", where), where + ".name");
  spec.shape = integersOf(member(object, "shape", where), where + ".shape");
  spec.dtype = dtypeNamed(stringOf(member(object, "dtype", where), where + ".dtype"), where);
  if (parameter) {
    const auto* flag = std::get_if<bool>(&member(object, "requiresGrad", where).value);
    if (!flag) malformed(where + ".requiresGrad", "a boolean");
    spec.requiresGrad = *flag;
  } else {
    spec.fill = numberOf(member(object, "fill", where), where + ".fill");
    if (const auto it = object.find("data"); it != object.end()) {
      for (const auto& item : arrayOf(it->second, where + ".data"))
        spec.data.push_back(numberOf(item, where + ".data"));
    }
    if (const auto it = object.find("persistent"); it != object.end()) {
      const auto* flag = std::get_if<bool>(&it->second.value);
      if (!flag) malformed(where + ".persistent", "a boolean");
      spec.persistent = *flag;
    }
  }
  return spec;
}

ModuleSpec moduleOf(const JsonValue& value, const std::string& where) {
  const auto& object = objectOf(value, where);
  ModuleSpec spec;
  spec.className = stringOf(member(object, "className", where), where + ".className");
  if (const auto it = object.find("layer"); it != object.end()) {
    const auto& layer = objectOf(it->second, where + ".layer");
    spec.layer = std::make_unique<LayerSpec>();
    spec.layer->type = stringOf(member(layer, "type", where + ".layer"), where + ".layer.type");
    spec.layer->options = optionsOf(layer, where + ".layer", "type");
  }
  for (const auto& item : arrayOf(member(object, "parameters", where), where + ".parameters")) {
    spec.parameters.push_back(stateTensor(item, where + ".parameters[]", true));
  }
  for (const auto& item : arrayOf(member(object, "buffers", where), where + ".buffers")) {
    spec.buffers.push_back(stateTensor(item, where + ".buffers[]", false));
  }
  if (const auto it = object.find("ties"); it != object.end()) {
    for (const auto& item : arrayOf(it->second, where + ".ties")) {
      const auto& tie = objectOf(item, where + ".ties[]");
      StateTie parsed;
      parsed.name = stringOf(member(tie, "name", where), where + ".ties[].name");
      parsed.source = stringOf(member(tie, "source", where), where + ".ties[].source");
      const auto buffer = tie.find("buffer");
      parsed.buffer =
          buffer != tie.end() && std::get_if<bool>(&buffer->second.value) && *std::get_if<bool>(&buffer->second.value);
      spec.ties.push_back(std::move(parsed));
    }
  }
  if (const auto it = object.find("order"); it != object.end()) {
    for (const auto& item : arrayOf(it->second, where + ".order"))
      spec.order.push_back(stringOf(item, where + ".order[]"));
  }
  for (const auto& item : arrayOf(member(object, "children", where), where + ".children")) {
    const auto& child = objectOf(item, where + ".children[]");
    const std::string name = stringOf(member(child, "name", where), where + ".children[].name");
    spec.children.emplace_back(name, moduleOf(member(child, "module", where), where + "." + name));
  }
  return spec;
}

ConstructionStep constructionStep(const JsonValue& value) {
  const auto& object = objectOf(value, "construction[]");
  ConstructionStep step;
  if (const auto it = object.find("layer"); it != object.end()) {
    step.kind = ConstructionStep::Kind::Layer;
    step.layerPath = stringOf(it->second, "construction[].layer");
    const auto copied = object.find("copied");
    step.copiedLayer =
        copied != object.end() && std::get_if<bool>(&copied->second.value) && *std::get_if<bool>(&copied->second.value);
    return step;
  }
  if (const auto it = object.find("cast"); it != object.end()) {
    step.kind = ConstructionStep::Kind::Cast;
    step.castPath = stringOf(it->second, "construction[].cast");
    step.castTo =
        dtypeNamed(stringOf(member(object, "dtype", "construction[]"), "construction[].dtype"), "construction[].dtype");
    return step;
  }
  if (const auto it = object.find("copy"); it != object.end()) {
    step.kind = ConstructionStep::Kind::Copy;
    step.copyTo = stringOf(it->second, "construction[].copy");
    step.copyFrom = stringOf(member(object, "from", "construction[]"), "construction[].from");
    return step;
  }
  step.initTarget = stringOf(member(object, "init", "construction[]"), "construction[].init");
  step.scheme = stringOf(member(object, "scheme", "construction[]"), "construction[].scheme");
  step.options = optionsOf(objectOf(member(object, "options", "construction[]"), "construction[].options"),
                           "construction[].options", "");
  return step;
}

int64_t integerOf(const JsonValue& value, const std::string& where) {
  if (!value.integer()) malformed(where, "an integer");
  return *value.integer();
}

// The calls with a decode kernel; graphs saved before kernels existed have no calls or none with one.
std::vector<DecodeKernelCall> decodeKernelsOf(const JsonObject& graph) {
  std::vector<DecodeKernelCall> kernels;
  const auto calls = graph.find("calls");
  if (calls == graph.end()) return kernels;
  for (const auto& item : arrayOf(calls->second, "graph.calls")) {
    const auto& call = objectOf(item, "graph.calls[]");
    const auto decode = call.find("decode");
    if (decode == call.end()) continue;
    const auto& spec = objectOf(decode->second, "graph.calls[].decode");
    const std::string where = "graph.calls[].decode";
    DecodeKernelCall kernel;
    kernel.kind = stringOf(member(spec, "kind", where), where + ".kind");
    kernel.module = stringOf(member(call, "module", "graph.calls[]"), "graph.calls[].module");
    kernel.inputs = integersOf(member(call, "inputs", "graph.calls[]"), "graph.calls[].inputs");
    kernel.output = integerOf(member(call, "output", "graph.calls[]"), "graph.calls[].output");
    kernel.heads = integerOf(member(spec, "heads", where), where + ".heads");
    kernel.kvHeads = integerOf(member(spec, "kvHeads", where), where + ".kvHeads");
    kernel.headDim = integerOf(member(spec, "headDim", where), where + ".headDim");
    kernel.eps = numberOf(member(spec, "eps", where), where + ".eps");
    const JsonValue& window = member(spec, "window", where);
    if (!std::holds_alternative<std::nullptr_t>(window.value)) kernel.window = integerOf(window, where + ".window");
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

GraphSpec graphOf(const JsonValue& value) {
  const auto& object = objectOf(value, "graph");
  GraphSpec graph;
  for (const auto& input : arrayOf(member(object, "inputs", "graph"), "graph.inputs"))
    graph.inputs.push_back(stringOf(input, "graph.inputs[]"));
  for (const auto& item : arrayOf(member(object, "nodes", "graph"), "graph.nodes")) {
    const auto& node = objectOf(item, "graph.nodes[]");
    GraphNode parsed;
    parsed.op = stringOf(member(node, "op", "graph.nodes[]"), "graph.nodes[].op");
    parsed.args = arrayOf(member(node, "args", "graph.nodes[]"), "graph.nodes[].args");
    parsed.scope = stringOf(member(node, "scope", "graph.nodes[]"), "graph.nodes[].scope");
    if (const auto it = node.find("at"); it != node.end()) parsed.at = stringOf(it->second, "graph.nodes[].at");
    graph.nodes.push_back(std::move(parsed));
  }
  graph.outputs = integersOf(member(object, "outputs", "graph"), "graph.outputs");
  graph.decodeKernels = decodeKernelsOf(object);
  // Graphs saved before forward could return several outputs have neither field: one tensor.
  if (const auto it = object.find("returns"); it != object.end()) {
    static const std::pair<const char*, OutputLayout::Kind> kKinds[] = {{"tensor", OutputLayout::Kind::Tensor},
                                                                        {"array", OutputLayout::Kind::Array},
                                                                        {"object", OutputLayout::Kind::Object}};
    const std::string& returned = stringOf(it->second, "graph.returns");
    const auto kind =
        std::find_if(std::begin(kKinds), std::end(kKinds), [&](const auto& entry) { return returned == entry.first; });
    if (kind == std::end(kKinds)) throw InvalidState("firebrand bug: graph.returns is '" + returned + "'");
    std::vector<std::string> names;
    for (const auto& name : arrayOf(member(object, "outputNames", "graph"), "graph.outputNames"))
      names.push_back(stringOf(name, "graph.outputNames[]"));
    graph.returns = OutputLayout(kind->second, std::move(names));
  }
  if (graph.returns.names.size() != graph.outputs.size() || graph.outputs.empty()) {
    throw InvalidState("firebrand bug: graph.outputs and graph.outputNames differ in length");
  }
  return graph;
}

}  // namespace

at::ScalarType dtypeNamed(const std::string& name, const std::string& owner) {
  static const std::pair<const char*, at::ScalarType> kNames[] = {
      {"float32", at::kFloat}, {"float64", at::kDouble}, {"float16", at::kHalf}, {"bfloat16", at::kBFloat16},
      {"int64", at::kLong},    {"int32", at::kInt},      {"int16", at::kShort},  {"int8", at::kChar},
      {"uint8", at::kByte},    {"bool", at::kBool}};
  for (const auto& [known, type] : kNames) {
    if (name == known) return type;
  }
  throw InvalidArgument(owner + ": unknown dtype '" + name + "'");
}

GraphModelSpec parseGraphModel(const std::string& json) {
  const JsonValue document = parseJson(json, "traced model");
  const auto& object = objectOf(document, "description");
  GraphModelSpec spec;
  spec.modules = moduleOf(member(object, "modules", "description"), "modules");
  for (const auto& step : arrayOf(member(object, "construction", "description"), "construction")) {
    spec.construction.push_back(constructionStep(step));
  }
  spec.graph = graphOf(member(object, "graph", "description"));
  if (const auto loaded = object.find("valuesLoadedLater"); loaded != object.end()) {
    for (const auto& name : arrayOf(loaded->second, "valuesLoadedLater"))
      spec.valuesLoadedLater.push_back(stringOf(name, "valuesLoadedLater[]"));
  }
  return spec;
}

}  // namespace firebrand

#include "core/nn/graph_program.h"

#include "core/errors.h"
#include "core/nn/layer_calls.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

void collectReads(const JsonValue& value, std::vector<int64_t>& reads) {
  if (const auto* list = value.array()) {
    for (const auto& item : *list) collectReads(item, reads);
  } else if (const auto* object = value.object()) {
    const auto it = object->find("v");
    if (it != object->end() && it->second.integer()) reads.push_back(*it->second.integer());
  }
}

std::string valueText(const c10::IValue& value) {
  if (value.isTensor()) return shapeAndDtypeText(value.toTensor());
  if (value.isInt()) return std::to_string(value.toInt());
  return value.tagKind();
}

}  // namespace

GraphProgram::GraphProgram(GraphSpec graph, ModuleTree& tree) : graph_(std::move(graph)) {
  steps_.reserve(graph_.nodes.size());
  for (size_t index = 0; index < graph_.nodes.size(); ++index) {
    std::vector<int64_t> reads;
    for (const auto& arg : graph_.nodes[index].args) collectReads(arg, reads);
    reads_.push_back(std::move(reads));
    steps_.push_back(compileNode(index, tree));
  }
  for (const auto& name : graph_.inputs) {
    int64_t slot = -1;
    for (size_t index = 0; index < graph_.nodes.size(); ++index) {
      const auto& node = graph_.nodes[index];
      if (node.op == "input" && !node.args.empty() && node.args[0].string() && *node.args[0].string() == name) slot = static_cast<int64_t>(index);
    }
    if (slot < 0) throw InvalidState("firebrand bug: graph input '" + name + "' has no node");
    inputSlots_.push_back(slot);
  }
  for (const int64_t output : graph_.outputs) {
    if (output < 0 || static_cast<size_t>(output) >= graph_.nodes.size()) throw InvalidState("firebrand bug: graph output out of range");
  }
}

OpRun GraphProgram::compileNode(size_t index, ModuleTree& tree) {
  const GraphNode& node = graph_.nodes[index];
  const NodeArgs args(node, index);
  if (node.op == "input") return OpRun();
  if (node.op == "state") {
    const std::string name = args.text(0);
    const auto* parameter = tree.root->named_parameters().find(name);
    const auto* buffer = parameter ? nullptr : tree.root->named_buffers().find(name);
    if (!parameter && !buffer) throw InvalidState("firebrand bug: forward reads '" + name + "', which the model does not hold");
    const at::Tensor tensor = parameter ? *parameter : *buffer;
    return [tensor](GraphFrame&) -> c10::IValue { return tensor; };
  }
  if (OpRun call = compileLayerCall(args, tree)) return call;
  OpRun run = compileOp(args);
  if (!run) throw InvalidState("firebrand bug: op '" + node.op + "' is not one C++ runs");
  return run;
}

std::vector<at::Tensor> GraphProgram::run(const std::vector<at::Tensor>& inputs, bool training, c10::Device device,
                                          DecodeCache* cache) const {
  const GraphFrame frame = runFrame(inputs, training, device, cache);
  std::vector<at::Tensor> outputs;
  outputs.reserve(graph_.outputs.size());
  for (const int64_t output : graph_.outputs) outputs.push_back(frame.values[output].toTensor());
  return outputs;
}

std::vector<c10::IValue> GraphProgram::values(const std::vector<at::Tensor>& inputs, bool training, c10::Device device) const {
  return runFrame(inputs, training, device, nullptr).values;
}

GraphFrame GraphProgram::runFrame(const std::vector<at::Tensor>& inputs, bool training, c10::Device device, DecodeCache* cache) const {
  GraphFrame frame;
  frame.values.resize(steps_.size());
  frame.training = training;
  frame.device = device;
  frame.cache = cache;
  for (size_t i = 0; i < inputSlots_.size(); ++i) frame.values[inputSlots_[i]] = inputs.at(i);
  for (size_t index = 0; index < steps_.size(); ++index) {
    if (!steps_[index]) continue;
    try {
      frame.values[index] = steps_[index](frame);
    } catch (const NotIncremental& reason) {
      const GraphNode& node = graph_.nodes[index];
      const std::string where = isLayerCall(node.op) ? "" : (node.scope.empty() ? std::string("forward") : node.scope) + ": ";
      throw NotIncremental(where + reason.what() + (node.at.empty() ? "" : " (at " + node.at + ")"));
    } catch (const Error& error) {
      if (isLayerCall(graph_.nodes[index].op)) throw;  // the layer's own errors name it already
      fail(index, frame, error, error.code() != "ERR_FIREBRAND_SHAPE_MISMATCH");
    } catch (const c10::TypeError& error) {
      fail(index, frame, error, true);
    } catch (const std::exception& error) {  // c10::Error, or std::runtime_error from size inference
      fail(index, frame, error, false);
    }
  }
  return frame;
}

void GraphProgram::fail(size_t index, const GraphFrame& frame, const std::exception& error, bool wrongType) const {
  const GraphNode& node = graph_.nodes[index];
  std::string operands;
  for (const int64_t read : reads_[index]) {
    operands += (operands.empty() ? "" : ", ") + valueText(frame.values[read]);
  }
  const std::string reason = torchReason(error);
  const std::string message = (node.scope.empty() ? std::string("forward") : node.scope) + ": " + node.op + "(" + operands +
                              ") failed" + (node.at.empty() ? "" : " at " + node.at) + ": " + reason;
  if (wrongType) throw InvalidArgument(message);
  throw ShapeMismatch(message);
}

}  // namespace firebrand

#include "core/graph/graph_program.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <map>

#include "core/errors.h"
#include "core/graph/channels_last_lowering.h"
#include "core/graph/decode_kernels.h"
#include "core/graph/inference_folding.h"
#include "core/graph/layer_calls.h"
#include "core/graph/layer_norm_lowering.h"
#include "core/graph/linear_lowering.h"
#include "core/graph/lowered_steps.h"
#include "core/graph/op_row.h"
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

// The innermost module of each node's scope: a node trains only while that module does, so ops of a
// module kept in eval mode (a frozen one, or one the user put in eval) run as eval, dropout included.
std::vector<std::shared_ptr<torch::nn::Module>> moduleOfEachScope(const GraphSpec& graph, torch::nn::Module& root) {
  std::map<std::string, std::shared_ptr<torch::nn::Module>> byPath;
  for (const auto& item : root.named_modules("", /*include_self=*/true)) byPath[item.key()] = item.value();
  std::vector<std::shared_ptr<torch::nn::Module>> modules;
  modules.reserve(graph.nodes.size());
  for (const auto& node : graph.nodes) {
    std::string scope = node.scope;
    auto it = byPath.find(scope);
    while (it == byPath.end()) {
      const size_t dot = scope.rfind('.');
      scope = dot == std::string::npos ? std::string() : scope.substr(0, dot);
      it = byPath.find(scope);
    }
    modules.push_back(it->second);
  }
  return modules;
}

// By node: the values it reads last, or its own if nothing reads it; the graph's outputs are never among them.
std::vector<std::vector<int64_t>> lastReaders(const GraphSpec& graph, const std::vector<std::vector<int64_t>>& reads) {
  const Readers readers(graph, reads);
  std::vector<bool> output(graph.nodes.size(), false);
  for (const int64_t slot : graph.outputs) output[slot] = true;
  std::vector<std::vector<int64_t>> lastReadBy(graph.nodes.size());
  for (size_t slot = 0; slot < output.size(); ++slot) {
    if (!output[slot])
      lastReadBy[readers.count[slot] > 0 ? readers.last[slot] : slot].push_back(static_cast<int64_t>(slot));
  }
  return lastReadBy;
}

}  // namespace

GraphProgram::GraphProgram(GraphSpec graph, ModuleTree& tree) : graph_(std::move(graph)), inputDtype_(tree.inputDtype) {
  steps_.reserve(graph_.nodes.size());
  for (size_t index = 0; index < graph_.nodes.size(); ++index) {
    std::vector<int64_t> reads;
    for (const auto& arg : graph_.nodes[index].args) collectReads(arg, reads);
    reads_.push_back(std::move(reads));
    steps_.push_back(compileNode(index, tree));
  }
  scopeModules_ = moduleOfEachScope(graph_, *tree.root);
  lowerConvolutions(graph_, reads_, tree, steps_);
  lowerLinearLayers(graph_, reads_, tree, steps_);
  lowerLayerNorms(graph_, reads_, tree, steps_);
  keepChannelsLast(graph_, reads_, tree, steps_);
  decodeKernels_ = std::make_unique<const DecodeKernels>(graph_, reads_, tree);
  lastReadBy_ = lastReaders(graph_, reads_);
  for (const auto& name : graph_.inputs) {
    int64_t slot = -1;
    for (size_t index = 0; index < graph_.nodes.size(); ++index) {
      const auto& node = graph_.nodes[index];
      if (node.op == "input" && !node.args.empty() && node.args[0].string() && *node.args[0].string() == name)
        slot = static_cast<int64_t>(index);
    }
    if (slot < 0) throw InvalidState("firebrand bug: graph input '" + name + "' has no node");
    inputSlots_.push_back(slot);
  }
  for (const int64_t output : graph_.outputs) {
    if (output < 0 || static_cast<size_t>(output) >= graph_.nodes.size())
      throw InvalidState("firebrand bug: graph output out of range");
  }
}

OpRun GraphProgram::compileNode(size_t index, ModuleTree& tree) {
  const GraphNode& node = graph_.nodes[index];
  const NodeArgs args(node, index);
  if (node.op == "input") return OpRun();
  if (node.op == "state") {
    const std::string name = args.text(0);
    // The dicts are returned by value: find's pointers live as long as they do, so they are held.
    const auto parameters = tree.root->named_parameters();
    const auto buffers = tree.root->named_buffers();
    const auto* parameter = parameters.find(name);
    const auto* buffer = parameter ? nullptr : buffers.find(name);
    if (!parameter && !buffer)
      throw InvalidState("firebrand bug: forward reads '" + name + "', which the model does not hold");
    const at::Tensor tensor = parameter ? *parameter : *buffer;
    return [tensor](GraphFrame&) -> c10::IValue { return tensor; };
  }
  if (OpRun call = compileLayerCall(args, tree)) return call;
  const OpRow* row = findOp(node.op);
  if (!row) throw InvalidState("firebrand bug: op '" + node.op + "' is not one C++ runs");
  return row->compile(args);
}

std::vector<at::Tensor> GraphProgram::run(const std::vector<at::Tensor>& inputs, bool training, c10::Device device,
                                          DecodeCache* cache) const {
  const GraphFrame frame = runFrame(inputs, training, device, cache, false);
  std::vector<at::Tensor> outputs;
  outputs.reserve(graph_.outputs.size());
  for (const int64_t output : graph_.outputs) outputs.push_back(withoutChannelsLast(frame.values[output].toTensor()));
  return outputs;
}

std::vector<c10::IValue> GraphProgram::values(const std::vector<at::Tensor>& inputs, bool training,
                                              c10::Device device) const {
  return runFrame(inputs, training, device, nullptr, true).values;
}

GraphFrame GraphProgram::runFrame(const std::vector<at::Tensor>& inputs, bool training, c10::Device device,
                                  DecodeCache* cache, bool keepValues) const {
  GraphFrame frame;
  frame.values.resize(steps_.size());
  frame.training = training;
  frame.device = device;
  frame.cache = cache;
  for (size_t i = 0; i < inputSlots_.size(); ++i) {
    const at::Tensor& input = inputs.at(i);
    frame.values[inputSlots_[i]] = inputDtype_ && input.is_floating_point() ? input.to(*inputDtype_) : input;
  }
  const bool checkpointing = training && at::GradMode::is_enabled() && !segments_.empty();
  for (size_t index = 0; index < steps_.size();) {
    const size_t from = index;
    const int64_t segment = checkpointing && !segmentAt_.empty() ? segmentAt_[index] : -1;
    const int64_t kernel = cache ? decodeKernels_->startingAt(index) : -1;
    if (segment >= 0) {
      runCheckpointed(*this, static_cast<size_t>(segment), frame);
      index = segments_[segment].end;
    } else if (kernel >= 0 && runKernel(static_cast<size_t>(kernel), frame)) {
      index = decodeKernels_->end(static_cast<size_t>(kernel));
    } else {
      runSteps(index, index + 1, frame);
      ++index;
    }
    for (size_t node = from; node < index && !keepValues; ++node) {
      for (const int64_t slot : lastReadBy_[node]) frame.values[slot] = c10::IValue();
    }
  }
  return frame;
}

bool GraphProgram::runKernel(size_t kernel, GraphFrame& frame) const {
  try {
    return decodeKernels_->run(kernel, frame);
  } catch (const NotIncremental&) {
    throw;
  } catch (const std::exception& error) {
    // The kernel's own failure (out of memory, a firebrand bug): named as the call's first op's would be.
    fail(decodeKernels_->begin(kernel), frame, error, false);
  }
}

void GraphProgram::runSteps(size_t begin, size_t end, GraphFrame& frame) const {
  const bool training = frame.training;
  for (size_t index = begin; index < end; ++index) {
    if (!steps_[index]) continue;
    frame.training = training && scopeModules_[index]->is_training();
    try {
      frame.values[index] = steps_[index](frame);
    } catch (const NotIncremental& reason) {
      const GraphNode& node = graph_.nodes[index];
      const std::string where =
          isLayerCall(node.op) ? "" : (node.scope.empty() ? std::string("forward") : node.scope) + ": ";
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
  frame.training = training;
}

std::vector<std::string> GraphProgram::checkpoint(const std::vector<std::string>& modulePaths, ModuleTree& tree) {
  const auto under = [](const std::string& scope, const std::string& path) {
    return scope == path || scope.compare(0, path.size() + 1, path + ".") == 0;
  };
  const auto keyOf = [&](const GraphNode& node) -> std::string {
    for (const auto& path : modulePaths) {
      if (under(node.scope, path)) return path;
    }
    return "";
  };
  const auto named = tree.root->named_parameters();
  const auto buffers = tree.root->named_buffers();
  segments_.clear();
  segmentAt_.assign(graph_.nodes.size(), -1);
  std::vector<std::string> used;
  for (size_t index = 0; index < graph_.nodes.size();) {
    const std::string key = keyOf(graph_.nodes[index]);
    if (key.empty() || graph_.nodes[index].op == "input") {
      ++index;
      continue;
    }
    CheckpointSegment segment;
    segment.begin = index;
    while (index < graph_.nodes.size() && keyOf(graph_.nodes[index]) == key) ++index;
    segment.end = index;
    segment.path = key;
    for (size_t node = segment.begin; node < segment.end; ++node) {
      for (const int64_t read : reads_[node]) {
        if (static_cast<size_t>(read) < segment.begin &&
            std::find(segment.reads.begin(), segment.reads.end(), read) == segment.reads.end()) {
          segment.reads.push_back(read);
        }
      }
    }
    for (size_t node = segment.end; node < graph_.nodes.size(); ++node) {
      for (const int64_t read : reads_[node]) {
        if (static_cast<size_t>(read) >= segment.begin && static_cast<size_t>(read) < segment.end &&
            std::find(segment.escapes.begin(), segment.escapes.end(), read) == segment.escapes.end()) {
          segment.escapes.push_back(read);
        }
      }
    }
    for (const int64_t output : graph_.outputs) {
      if (static_cast<size_t>(output) >= segment.begin && static_cast<size_t>(output) < segment.end &&
          std::find(segment.escapes.begin(), segment.escapes.end(), output) == segment.escapes.end()) {
        segment.escapes.push_back(output);
      }
    }
    std::sort(segment.escapes.begin(), segment.escapes.end());
    for (const auto& item : named) {
      if (under(item.key(), key)) segment.parameters.push_back(item.value());
    }
    for (const auto& item : buffers) {
      if (under(item.key(), key)) segment.buffers.push_back(item.value());
    }
    segmentAt_[segment.begin] = static_cast<int64_t>(segments_.size());
    segments_.push_back(std::move(segment));
    if (std::find(used.begin(), used.end(), key) == used.end()) used.push_back(key);
  }
  return used;
}

void GraphProgram::fail(size_t index, const GraphFrame& frame, const std::exception& error, bool wrongType) const {
  const GraphNode& node = graph_.nodes[index];
  std::string operands;
  for (const int64_t read : reads_[index]) {
    operands += (operands.empty() ? "" : ", ") + valueText(frame.values[read]);
  }
  const std::string reason = torchReason(error);
  const std::string message = (node.scope.empty() ? std::string("forward") : node.scope) + ": " + node.op + "(" +
                              operands + ") failed" + (node.at.empty() ? "" : " at " + node.at) + ": " + reason;
  if (wrongType) throw InvalidArgument(message);
  throw ShapeMismatch(message);
}

}  // namespace firebrand

#include "core/graph/activation_checkpoint.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <torch/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <mutex>

#include "core/compat/torch_compat.h"
#include "core/errors.h"
#include "core/graph/graph_program.h"
#include "core/nn/frozen_linear.h"
#include "core/runtime/mixed_precision.h"

namespace firebrand {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Tensor rngState(c10::Device device) {
  at::Generator generator = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get_state();
}

void setRngState(c10::Device device, const at::Tensor& state) {
  at::Generator generator = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

class SegmentFunction : public torch::autograd::Function<SegmentFunction> {
 public:
  // `inputs`: the tensors the segment reads, then the module's parameters.
  // (A TensorList, not a std::vector: autograd only sees tensors passed as tensors or lists of them.)
  static variable_list forward(AutogradContext* ctx, const GraphProgram* program, int64_t index, GraphFrame* frame,
                               at::TensorList inputs) {
    const CheckpointSegment& segment = program->segment(static_cast<size_t>(index));
    ctx->saved_data["program"] = reinterpret_cast<int64_t>(program);
    ctx->saved_data["segment"] = index;
    ctx->saved_data["device"] = static_cast<int64_t>(frame->device.type());
    ctx->saved_data["deviceIndex"] = static_cast<int64_t>(frame->device.index());
    ctx->saved_data["rng"] = rngState(frame->device);
    ctx->saved_data["autocast"] = compat::autocastEnabled(frame->device.type());
    ctx->saved_data["autocastDtype"] = static_cast<int64_t>(compat::autocastDtype(frame->device.type()));
    // What the segment reads that is not a tensor (sizes, lists) is kept as it is.
    c10::impl::GenericList others(c10::AnyType::get());
    c10::List<bool> isTensor;
    for (const int64_t slot : segment.reads) {
      isTensor.push_back(frame->values[slot].isTensor());
      if (!frame->values[slot].isTensor()) others.push_back(frame->values[slot]);
    }
    ctx->saved_data["others"] = others;
    ctx->saved_data["isTensor"] = isTensor;
    ctx->save_for_backward(inputs.vec());
    const GradientsRecordedLater::Scope recomputedWithGradients;
    at::NoGradGuard noGrad;
    program->runSteps(segment.begin, segment.end, *frame);
    variable_list outputs;
    for (const int64_t slot : segment.escapes) {
      const c10::IValue& value = frame->values[slot];
      if (value.isTensor())
        outputs.push_back(value.toTensor());
      else if (!value.isInt() && !value.isDouble() && !value.isNone()) {
        throw InvalidArgument("activationCheckpointing: " + segment.path + " hands a " + value.tagKind() +
                              " to later ops; a checkpointed module must return tensors");
      }
    }
    return outputs;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto* program = reinterpret_cast<const GraphProgram*>(ctx->saved_data["program"].toInt());
    const CheckpointSegment& segment = program->segment(static_cast<size_t>(ctx->saved_data["segment"].toInt()));
    const c10::Device device(static_cast<c10::DeviceType>(ctx->saved_data["device"].toInt()),
                             static_cast<c10::DeviceIndex>(ctx->saved_data["deviceIndex"].toInt()));
    const variable_list saved = ctx->get_saved_variables();
    GraphFrame frame;
    frame.values.resize(program->graph().nodes.size());
    frame.training = true;
    frame.device = device;
    // The reads again: tensors as leaves that take gradients, the rest as they were.
    variable_list leaves;
    const auto others = ctx->saved_data["others"].toList();
    const auto isTensor = ctx->saved_data["isTensor"].toBoolList();
    size_t tensor = 0, other = 0;
    for (size_t i = 0; i < segment.reads.size(); ++i) {
      const int64_t slot = segment.reads[i];
      if (!isTensor.get(i)) {
        frame.values[slot] = others.get(other++);
      } else {
        at::Tensor leaf = saved[tensor++].detach();
        if (leaf.is_floating_point()) leaf.requires_grad_(true);
        leaves.push_back(leaf);
        frame.values[slot] = leaf;
      }
    }
    // The same random numbers (dropout masks), autocast and BatchNorm statistics as the forward had.
    const at::Tensor rngNow = rngState(device);
    setRngState(device, ctx->saved_data["rng"].toTensor());
    std::vector<at::Tensor> buffers;
    for (const auto& buffer : segment.buffers) buffers.push_back(buffer.clone());
    variable_list outputs, outputGrads;
    {
      at::AutoGradMode gradients(true);
      const bool autocast = ctx->saved_data["autocast"].toBool();
      AutocastScope scope(device.type(), autocast ? std::optional<at::ScalarType>(static_cast<at::ScalarType>(
                                                        ctx->saved_data["autocastDtype"].toInt()))
                                                  : std::nullopt);
      program->runSteps(segment.begin, segment.end, frame);
      size_t g = 0;
      for (const int64_t slot : segment.escapes) {
        if (!frame.values[slot].isTensor()) continue;
        const at::Tensor output = frame.values[slot].toTensor();
        const at::Tensor& grad = grads[g++];
        if (output.requires_grad() && grad.defined()) {
          outputs.push_back(output);
          outputGrads.push_back(grad);
        }
      }
    }
    setRngState(device, rngNow);
    if (!outputs.empty()) torch::autograd::backward(outputs, outputGrads);
    // After the backward, which checks that the statistics it saved were not changed since.
    {
      at::NoGradGuard noGrad;
      for (size_t i = 0; i < buffers.size(); ++i) segment.buffers[i].copy_(buffers[i]);
    }
    // The reads' gradients; the parameters' went straight into their .grad.
    // One gradient per argument of forward: none for the program, segment and frame.
    variable_list inputGrads(3);
    for (const auto& leaf : leaves) inputGrads.push_back(leaf.requires_grad() ? leaf.grad() : at::Tensor());
    for (size_t i = 0; i < segment.parameters.size(); ++i) inputGrads.push_back(at::Tensor());
    return inputGrads;
  }
};

}  // namespace

void runCheckpointed(const GraphProgram& program, size_t index, GraphFrame& frame) {
  const CheckpointSegment& segment = program.segment(index);
  variable_list inputs;
  for (const int64_t slot : segment.reads) {
    if (frame.values[slot].isTensor()) inputs.push_back(frame.values[slot].toTensor());
  }
  inputs.insert(inputs.end(), segment.parameters.begin(), segment.parameters.end());
  const variable_list outputs =
      SegmentFunction::apply(&program, static_cast<int64_t>(index), &frame, at::TensorList(inputs));
  // The escaping tensors take the function's outputs (with its backward); the rest of the segment's
  // values are let go, which is the point.
  size_t next = 0;
  std::vector<bool> escapes(segment.end - segment.begin, false);
  for (const int64_t slot : segment.escapes) {
    escapes[slot - segment.begin] = true;
    if (frame.values[slot].isTensor()) frame.values[slot] = outputs.at(next++);
  }
  for (size_t slot = segment.begin; slot < segment.end; ++slot) {
    if (!escapes[slot - segment.begin]) frame.values[slot] = c10::IValue();
  }
}

}  // namespace firebrand

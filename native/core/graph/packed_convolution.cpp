#include "core/graph/packed_convolution.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>

#include "core/graph/convolution_window.h"
#include "core/graph/format_strides.h"

namespace firebrand {
namespace {

// The op named, where its arguments begin with `names` and any after them have defaults (a boxed call
// with too few would read past its stack); absent where libtorch was built without oneDNN.
c10::optional<c10::OperatorHandle> opTaking(const char* name, const std::vector<std::string>& names) {
  auto op = c10::Dispatcher::singleton().findSchema({name, ""});
  if (!op) return c10::nullopt;
  const auto& arguments = op->schema().arguments();
  if (arguments.size() < names.size()) return c10::nullopt;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (i < names.size() ? arguments[i].name() != names[i] : !arguments[i].default_value()) return c10::nullopt;
  }
  return op;
}

// Calls `op` with `stack` and the defaults of the arguments after it.
c10::IValue boxedCall(const c10::OperatorHandle& op, torch::jit::Stack stack) {
  const auto& arguments = op.schema().arguments();
  for (size_t i = stack.size(); i < arguments.size(); ++i) stack.push_back(*arguments[i].default_value());
  op.callBoxed(stack);
  return std::move(stack.back());
}

// The ops aten/src/ATen/native/mkldnn/RegisterMkldnnOpContextClass.cpp registers, looked up once.
struct PrepackedOps {
  c10::optional<c10::OperatorHandle> prepack = opTaking(
      "mkldnn_prepacked::conv2d_prepack", {"W", "B", "stride", "padding", "dilation", "groups", "input_size", "attr"});
  c10::optional<c10::OperatorHandle> run = opTaking("mkldnn_prepacked::conv2d_run", {"X", "W_prepack"});
};

const PrepackedOps& prepackedOps() {
  static const PrepackedOps ops;
  return ops;
}

// Whether the kernel's window fits the padded input: where not, at::conv2d says so (oneDNN's packing failed
// with an error about format tags, and packing was off for the layer's later inputs).
bool windowFits(const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef padding, at::IntArrayRef dilation) {
  for (size_t d = 0; d < 2 && d < padding.size() && d < dilation.size(); ++d) {
    if (input.size(2 + d) + 2 * padding[d] < windowSpan(weight.size(2 + d), dilation[d])) return false;
  }
  return true;
}

// Sizes seen per convolution before the oldest packing is dropped (a last batch smaller than the others).
constexpr size_t kPackedSizesKept = 4;

}  // namespace

bool PackedConvolution::prepack(Packed& packed, const at::Tensor& weight, const at::Tensor& bias,
                                at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                                int64_t groups) {
  const c10::optional<at::Tensor> packedBias = bias.defined() ? c10::optional<at::Tensor>(bias) : c10::nullopt;
  try {
    // The prepack packs for the layout the weight's strides suggest: a 1x1 or depthwise weight made in rows
    // was packed for rows, and reordered again by oneDNN before every channels-last call.
    packed.context =
        boxedCall(*prepackedOps().prepack,
                  {withFormatStrides(weight, packed.format), packedBias, stride.vec(), padding.vec(), dilation.vec(),
                   groups, packed.sizes, std::string(packed.activation == FusedActivation::Relu ? "relu" : "none")});
    return true;
  } catch (const c10::Error&) {
    // A convolution oneDNN has no packing for at these sizes: they convolve as eager does.
    return false;
  }
}

std::optional<at::Tensor> PackedConvolution::run(const at::Tensor& input, const at::Tensor& weight,
                                                 const at::Tensor& bias, at::IntArrayRef stride,
                                                 at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups,
                                                 FusedActivation activation, const at::Tensor* residual) {
  const PrepackedOps& ops = prepackedOps();
  const c10::MemoryFormat format = input.suggest_memory_format();
  if (!ops.prepack || !ops.run || !at::hasMKLDNN() || !input.device().is_cpu() || input.dim() != 4 ||
      input.scalar_type() != at::kFloat || weight.scalar_type() != at::kFloat || !input.is_contiguous(format) ||
      !weight.is_contiguous(format) || (bias.defined() && bias.scalar_type() != at::kFloat) ||
      !windowFits(input, weight, padding, dilation) ||
      (residual && (!residual->device().is_cpu() || residual->scalar_type() != at::kFloat || residual->dim() != 4)))
    return std::nullopt;
  const std::vector<int64_t> residualStrides = residual ? residual->strides().vec() : std::vector<int64_t>();
  const auto same = [&](const Packed& p) {
    return p.format == format && p.activation == activation && input.sizes().equals(p.sizes) &&
           p.residualStrides == residualStrides;
  };
  auto found = std::find_if(packed_.begin(), packed_.end(), same);
  if (found == packed_.end()) {
    if (packed_.size() == kPackedSizesKept) packed_.erase(packed_.begin());
    const auto sibling =
        std::find_if(packed_.begin(), packed_.end(), [](const Packed& p) { return p.direct != nullptr; });
    Packed packed{input.sizes().vec(),
                  format,
                  activation,
                  residualStrides,
                  OnednnConvolution::make(input, weight, bias, stride, padding, dilation, groups, activation,
                                          sibling == packed_.end() ? nullptr : sibling->direct.get(), residual),
                  {}};
    if (!packed.direct && !residual) prepack(packed, weight, bias, stride, padding, dilation, groups);
    packed_.push_back(std::move(packed));
    found = std::prev(packed_.end());
  }
  if (found->direct) return found->direct->run(input, residual);
  if (found->context.isNone()) return std::nullopt;  // refused at these sizes
  at::Tensor out = boxedCall(*ops.run, {input, found->context}).toTensor();
  return activation == FusedActivation::Relu ? out : applyActivation(out, activation);
}

}  // namespace firebrand

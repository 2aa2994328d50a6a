#include "core/nn/linear_layer.h"

#include <ATen/ATen.h>

#include "core/nn/frozen_linear.h"
#include "core/nn/int8_weights.h"
#include "core/nn/streamed_linear.h"

namespace firebrand {

at::Tensor linearForward(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias,
                         const at::Tensor& scale) {
  if (streamedLinearFits(input, weight, bias)) return streamedLinear(input, weight, scale, bias);
  if (scale.defined()) return int8Linear(input, weight, scale, bias);
  if (frozenLinearFits(input, weight, bias)) return frozenLinear(input, weight, bias);
  return at::linear(input, weight, bias);
}

void LinearLayerImpl::quantizeInt8() {
  if (quantized()) return;
  Int8Weight q = quantizeRows(weight.detach());
  parameters_.erase("weight");
  weight = register_buffer("weight", q.values);
  weightScale = register_buffer("weight_scale", q.scale);
}

void LinearLayerImpl::allocateUndrawn(int64_t in, int64_t out) {
  options.in_features(in).out_features(out);
  const bool hasBias = bias.defined();
  parameters_.clear();
  weight = register_parameter("weight", at::zeros({out, in}));
  // As LinearImpl registers them: no bias is an undefined "bias" that takes no gradient.
  bias = hasBias ? register_parameter("bias", at::zeros({out})) : register_parameter("bias", {}, false);
}

}  // namespace firebrand

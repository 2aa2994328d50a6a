// Int8 weight-only quantization of linear layers, per output channel and symmetric,
// as bitsandbytes' LLM.int8 rows and torchao's int8_weight_only: row n of the weight
// is values[n] * scale[n], with scale[n] = max |w[n, :]| / 127 and values rounded into
// [-127, 127]. The weight is frozen: gradients flow to the input (for LoRA adapters
// and the layers below), never to the weight.
#pragma once
#include <ATen/core/Tensor.h>

namespace firebrand {

struct Int8Weight {
  at::Tensor values;  // [N, K] int8
  at::Tensor scale;   // [N] float
};

Int8Weight quantizeRows(const at::Tensor& weight);
// values * scale in `dtype`.
at::Tensor dequantizeRows(const at::Tensor& values, const at::Tensor& scale, at::ScalarType dtype);
// input times the dequantized weight plus bias, differentiable in input (and bias): the weight is
// widened to the input's dtype one layer at a time, in the forward pass and again in the backward one,
// so that no float copy of it outlives the call.
at::Tensor int8Linear(const at::Tensor& input, const at::Tensor& values, const at::Tensor& scale,
                      const at::Tensor& bias);

}  // namespace firebrand

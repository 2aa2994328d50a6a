// torch.nn.Linear, with a few rows at inference sent through streamedLinear, which
// reads the weight once (generation feeds one position per sequence per step), and
// a weight that may be int8 with a scale per output row (int8_weights.h).
// Training and many rows go through at::linear, as PyTorch does.
#pragma once
#include <torch/nn/modules/linear.h>

namespace firebrand {

// input times weight (float, bfloat16, or int8 with its float scale per row) plus bias.
at::Tensor linearForward(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias,
                         const at::Tensor& scale = {});

class LinearLayerImpl : public torch::nn::LinearImpl {
 public:
  using torch::nn::LinearImpl::LinearImpl;
  at::Tensor forward(const at::Tensor& input) { return linearForward(input, weight, bias, weightScale); }
  // Replaces the weight parameter by int8 values and a float scale per output row (buffers "weight"
  // and "weight_scale"), frozen for good: what fromPretrained's quantize: 'int8' does.
  void quantizeInt8();
  // Weight [out, in] (and bias [out]) made zeros, no values drawn (initial_values.h): for a layer built with
  // no features, whose caller fills them.
  void allocateUndrawn(int64_t in, int64_t out);
  bool quantized() const { return weightScale.defined(); }

  at::Tensor weightScale;
};
TORCH_MODULE(LinearLayer);

}  // namespace firebrand

// torch.nn.Linear, with one row at inference sent through a matrix-vector product.
// Generation feeds one position per step: BLAS's gemm then packs the whole weight
// matrix for a single row (over half of a decode step), where gemv reads it once.
// Training and several rows go through at::linear, as PyTorch does.
#pragma once
#include <torch/nn/modules/linear.h>

namespace firebrand {

at::Tensor linearForward(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias);

class LinearLayerImpl : public torch::nn::LinearImpl {
 public:
  using torch::nn::LinearImpl::LinearImpl;
  at::Tensor forward(const at::Tensor& input) { return linearForward(input, weight, bias); }
};
TORCH_MODULE(LinearLayer);

}  // namespace firebrand

#include "core/nn/onednn_linear.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/compat/torch_compat.h"

namespace firebrand {
namespace {

const c10::OperatorHandle* linearPointwise() {
  // (findSchema's optional is c10's in 1.13, std's in 2.x.)
  static const auto op = []() -> std::unique_ptr<c10::OperatorHandle> {
    const char* backend = std::getenv("FIREBRAND_LINEAR_BACKEND");
    if (backend && std::strcmp(backend, "blas") == 0) return nullptr;
    const auto found = c10::Dispatcher::singleton().findSchema({"mkldnn::_linear_pointwise", ""});
    return found ? std::make_unique<c10::OperatorHandle>(*found) : nullptr;
  }();
  return op.get();
}

// x [M, K] times w [N, K] transposed: oneDNN takes strided operands (a transposed view is read as
// such, not copied).
at::Tensor innerProduct(const at::Tensor& x, const at::Tensor& w) {
  torch::jit::Stack stack{x,
                          w,
                          c10::IValue(),
                          c10::IValue(std::string("none")),
                          c10::IValue(c10::List<c10::optional<at::Scalar>>()),
                          c10::IValue()};
  linearPointwise()->callBoxed(&stack);
  return stack.back().toTensor();
}

// (The bias is added outside: autograd's custom functions take defined tensors only.)
class OnednnLinearFunction : public torch::autograd::Function<OnednnLinearFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input, const at::Tensor& weight) {
    const at::Tensor x = input.reshape({-1, weight.size(1)});
    // The input is kept for the weight's gradient only: a frozen layer (LoRA's base) keeps none.
    ctx->save_for_backward({weight.requires_grad() ? x : at::Tensor(), weight});
    std::vector<int64_t> shape = input.sizes().vec();
    shape.back() = weight.size(0);
    return innerProduct(x.contiguous(), weight).view(shape);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor g = grads[0].reshape({-1, weight.size(0)}).contiguous();
    at::Tensor gradInput, gradWeight;
    if (ctx->needs_input_grad(0)) {
      std::vector<int64_t> shape = grads[0].sizes().vec();
      shape.back() = weight.size(1);
      gradInput = innerProduct(g, weight.t()).view(shape);
    }
    if (ctx->needs_input_grad(1)) gradWeight = innerProduct(g.t().contiguous(), x.t());
    return {gradInput, gradWeight};
  }
};

}  // namespace

bool onednnLinearAvailable() { return linearPointwise() != nullptr; }

bool onednnLinearFits(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias) {
  const auto floatCpu = [](const at::Tensor& t) {
    return t.scalar_type() == at::kFloat && t.device().is_cpu() && t.layout() == at::kStrided;
  };
  // Under autocast at::linear computes in the lower precision: it keeps this layer.
  return onednnLinearAvailable() && !compat::autocastEnabled(c10::DeviceType::CPU) && input.dim() >= 2 &&
         weight.dim() == 2 && input.size(-1) == weight.size(1) && input.numel() > 0 && floatCpu(input) &&
         floatCpu(weight) && (!bias.defined() || floatCpu(bias));
}

at::Tensor onednnLinear(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias) {
  const at::Tensor output = OnednnLinearFunction::apply(input, weight);
  return bias.defined() ? output + bias : output;
}

}  // namespace firebrand

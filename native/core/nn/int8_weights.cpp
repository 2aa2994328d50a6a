#include "core/nn/int8_weights.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>

#include <algorithm>

namespace firebrand {
namespace {

// y = x W^T with W widened from int8 on each use; dx = dy W, widened again.
class Int8LinearFunction : public torch::autograd::Function<Int8LinearFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& input,
                            const at::Tensor& values, const at::Tensor& scale) {
    context->save_for_backward({values, scale});
    return at::linear(input, dequantizeRows(values, scale, input.scalar_type()));
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list outputs) {
    const auto saved = context->get_saved_variables();
    const at::Tensor& gradient = outputs[0];
    return {at::matmul(gradient, dequantizeRows(saved[0], saved[1], gradient.scalar_type())), at::Tensor(),
            at::Tensor()};
  }
};

}  // namespace

Int8Weight quantizeRows(const at::Tensor& weight) {
  at::NoGradGuard noGrad;
  Int8Weight q{at::empty(weight.sizes(), weight.options().dtype(at::kChar)),
               at::empty({weight.size(0)}, weight.options().dtype(at::kFloat))};
  // A few hundred rows at a time: float temporaries of a few MB, not of the whole weight.
  constexpr int64_t kRows = 256;
  for (int64_t start = 0; start < weight.size(0); start += kRows) {
    const int64_t count = std::min(kRows, weight.size(0) - start);
    const at::Tensor rows = weight.narrow(0, start, count).to(at::kFloat);
    // An all-zero row keeps scale 1 (its values are zeros either way).
    at::Tensor scale = rows.abs().amax({1}).div_(127);
    scale.masked_fill_(scale == 0, 1);
    q.values.narrow(0, start, count).copy_(rows.div(scale.unsqueeze(1)).round_().clamp_(-127, 127));
    q.scale.narrow(0, start, count).copy_(scale);
  }
  return q;
}

at::Tensor dequantizeRows(const at::Tensor& values, const at::Tensor& scale, at::ScalarType dtype) {
  return values.to(at::kFloat).mul_(scale.unsqueeze(1)).to(dtype);
}

at::Tensor int8Linear(const at::Tensor& input, const at::Tensor& values, const at::Tensor& scale,
                      const at::Tensor& bias) {
  at::Tensor output = Int8LinearFunction::apply(input, values, scale);
  return bias.defined() ? output + bias : output;
}

}  // namespace firebrand

#include "core/nn/int8_weights.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <algorithm>

#include "core/nn/dequantize_rows.h"

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

namespace {

template <typename O>
at::Tensor dequantizeInto(const at::Tensor& values, const at::Tensor& scale, at::ScalarType dtype) {
  const int64_t N = values.size(0), K = values.size(1);
  at::Tensor out = at::empty({N, K}, values.options().dtype(dtype));
  const int8_t* v = values.data_ptr<int8_t>();
  const float* s = scale.data_ptr<float>();
  O* o = out.data_ptr<O>();
  // A thread's share is at least ~256K weights.
  const int64_t grain = std::max<int64_t>(1, (256 * 1024) / std::max<int64_t>(K, 1));
  at::parallel_for(0, N, grain, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) dequantizeRow(v + n * K, K, s[n], o + n * K);
  });
  return out;
}

}  // namespace

at::Tensor dequantizeRows(const at::Tensor& values, const at::Tensor& scale, at::ScalarType dtype) {
  const bool rows = values.dim() == 2 && values.scalar_type() == at::kChar && values.device().is_cpu() &&
                    scale.dim() == 1 && scale.size(0) == values.size(0);
  if (rows && (dtype == at::kFloat || dtype == at::kBFloat16)) {
    const at::Tensor v = values.contiguous(), s = scale.to(at::kFloat).contiguous();
    return dtype == at::kFloat ? dequantizeInto<float>(v, s, dtype) : dequantizeInto<c10::BFloat16>(v, s, dtype);
  }
  return values.to(at::kFloat).mul_(scale.unsqueeze(1)).to(dtype);
}

at::Tensor int8Linear(const at::Tensor& input, const at::Tensor& values, const at::Tensor& scale,
                      const at::Tensor& bias) {
  at::Tensor output = Int8LinearFunction::apply(input, values, scale);
  return bias.defined() ? output + bias : output;
}

}  // namespace firebrand

#include "core/nn/streamed_linear.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>

#include <algorithm>

#include "core/compat/torch_compat.h"
#include "core/nn/simd_rows.h"
#include "core/runtime/inference_run.h"

namespace firebrand {
namespace {

// What a row's sums become: scaled (int8), biased, stored in the output's dtype.
struct Epilogue {
  const float* scale = nullptr;
  const float* bias = nullptr;
  float operator()(float sum, int64_t n) const { return (scale ? sum * scale[n] : sum) + (bias ? bias[n] : 0.0f); }
};

// out[b, n] for the weight rows n in [begin, end): each row read from memory once, from cache for b > 0.
template <typename W, typename O>
void streamRows(const W* weight, int64_t K, int64_t N, const float* x, int64_t B, int64_t begin, int64_t end,
                const Epilogue& epilogue, O* out) {
  for (int64_t n = begin; n < end; ++n) {
    for (int64_t b = 0; b < B; ++b) out[b * N + n] = static_cast<O>(epilogue(dotRow(weight + n * K, K, x + b * K), n));
  }
}

template <typename W, typename O>
void streamAll(const at::Tensor& weight, const float* x, int64_t B, const Epilogue& epilogue, O* o) {
  const int64_t N = weight.size(0), K = weight.size(1);
  const W* w = weight.data_ptr<W>();
  // A thread's share is at least ~64K weights, so that small layers stay on one thread.
  const int64_t grain = std::max<int64_t>(1, (64 * 1024) / std::max<int64_t>(K, 1));
  at::parallel_for(0, N, grain,
                   [&](int64_t begin, int64_t end) { streamRows(w, K, N, x, B, begin, end, epilogue, o); });
}

template <typename O>
void streamInto(const at::Tensor& weight, const float* x, int64_t B, const Epilogue& epilogue, O* out) {
  switch (weight.scalar_type()) {
    case at::kFloat:
      return streamAll<float, O>(weight, x, B, epilogue, out);
    case at::kBFloat16:
      return streamAll<c10::BFloat16, O>(weight, x, B, epilogue, out);
    default:
      return streamAll<int8_t, O>(weight, x, B, epilogue, out);
  }
}

bool readableWeight(const at::Tensor& weight) {
  const auto type = weight.scalar_type();
  return weight.dim() == 2 && weight.is_contiguous() &&
         (type == at::kFloat || type == at::kBFloat16 || type == at::kChar);
}

}  // namespace

bool streamedLinearFits(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias) {
  if (!input.defined() || input.dim() < 1 || !readableWeight(weight) || input.size(-1) != weight.size(1)) return false;
  if (!inInferenceRun() || !input.device().is_cpu() || !weight.device().is_cpu() ||
      compat::autocastEnabled(c10::DeviceType::CPU))
    return false;
  const bool float32 = input.scalar_type() == at::kFloat, bfloat16 = input.scalar_type() == at::kBFloat16;
  // A float weight takes float rows and a bfloat16 one bfloat16 rows (as at::linear); int8 takes either.
  const bool dtypes =
      weight.scalar_type() == at::kChar ? (float32 || bfloat16) : input.scalar_type() == weight.scalar_type();
  const bool noAutograd = !at::GradMode::is_enabled() || (!input.requires_grad() && !weight.requires_grad() &&
                                                          !(bias.defined() && bias.requires_grad()));
  const int64_t rows = weight.size(1) == 0 ? 0 : input.numel() / weight.size(1);
  return dtypes && noAutograd && rows >= 1 && rows <= kStreamedRowsMax &&
         (!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0)));
}

at::Tensor streamedLinear(const at::Tensor& rows, const at::Tensor& weight, const at::Tensor& scale,
                          const at::Tensor& bias) {
  // No aten op but the output's allocation on float32 rows: at one position a step, each op's own
  // cost is as large as a small layer's weights.
  const int64_t K = weight.size(1), B = rows.numel() / K;
  const at::Tensor input = rows.contiguous();
  std::vector<float> widened;
  const float* x = input.scalar_type() == at::kFloat ? input.data_ptr<float>() : nullptr;
  if (!x) {
    const c10::BFloat16* narrow = input.data_ptr<c10::BFloat16>();
    widened.assign(narrow, narrow + B * K);
    x = widened.data();
  }
  const at::Tensor wideBias = bias.defined() ? bias.to(at::kFloat).contiguous() : at::Tensor();
  const at::Tensor wideScale = scale.defined() ? scale.to(at::kFloat).contiguous() : at::Tensor();
  const Epilogue epilogue{wideScale.defined() ? wideScale.data_ptr<float>() : nullptr,
                          wideBias.defined() ? wideBias.data_ptr<float>() : nullptr};
  std::vector<int64_t> shape = rows.sizes().vec();
  shape.back() = weight.size(0);
  at::Tensor out = at::empty(shape, rows.options());
  if (out.scalar_type() == at::kFloat)
    streamInto(weight, x, B, epilogue, out.data_ptr<float>());
  else
    streamInto(weight, x, B, epilogue, out.data_ptr<c10::BFloat16>());
  return out;
}

void streamedRows(const at::Tensor& weight, const float* scale, const float* bias, const float* x, int64_t B,
                  float* out) {
  streamInto(weight, x, B, Epilogue{scale, bias}, out);
}

}  // namespace firebrand

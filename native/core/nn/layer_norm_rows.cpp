#include "core/nn/layer_norm_rows.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>

#include "core/nn/cpu_float.h"
#include "core/nn/simd_rows.h"

namespace firebrand {
namespace {

#if defined(__x86_64__)
// The first `count` (< 16) lanes.
FIREBRAND_AVX512 __mmask16 firstLanes16(int64_t count) { return static_cast<__mmask16>((1u << count) - 1); }

// x, or (x - centre)^2 where Squares (masked lanes stay zero: they load zeros, and are cleared after).
template <bool Squares>
FIREBRAND_AVX512 __m512 term16(__m512 x, __m512 centre) {
  if constexpr (!Squares) return x;
  const __m512 deviation = _mm512_sub_ps(x, centre);
  return _mm512_mul_ps(deviation, deviation);
}

// The sum over a row of its terms, 32 columns at a time, then 16 (the last ones masked).
template <bool Squares>
FIREBRAND_AVX512 float rowSum16(const float* x, int64_t D, __m512 centre) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0;
  int64_t d = 0;
  for (; d + 32 <= D; d += 32) {
    a0 = _mm512_add_ps(a0, term16<Squares>(_mm512_loadu_ps(x + d), centre));
    a1 = _mm512_add_ps(a1, term16<Squares>(_mm512_loadu_ps(x + d + 16), centre));
  }
  for (; d < D; d += 16) {
    const __mmask16 lanes = D - d >= 16 ? static_cast<__mmask16>(0xffff) : firstLanes16(D - d);
    a0 = _mm512_add_ps(a0, _mm512_maskz_mov_ps(lanes, term16<Squares>(_mm512_maskz_loadu_ps(lanes, x + d), centre)));
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
}

// One row: y = (x * rstd - mean * rstd) * weight + bias, as ATen's LayerNorm kernel orders it.
FIREBRAND_AVX512 void normalizeRow16(const float* x, float* y, int64_t D, const float* weight, const float* bias,
                                     float eps) {
  const float mean = rowSum16<false>(x, D, _mm512_setzero_ps()) / static_cast<float>(D);
  const float variance = rowSum16<true>(x, D, _mm512_set1_ps(mean)) / static_cast<float>(D);
  const float rstd = 1.0f / std::sqrt(std::max(variance, 0.0f) + eps);
  const __m512 scale = _mm512_set1_ps(rstd), shift = _mm512_set1_ps(-mean * rstd), one = _mm512_set1_ps(1.0f);
  for (int64_t d = 0; d < D; d += 16) {
    const __mmask16 lanes = D - d >= 16 ? static_cast<__mmask16>(0xffff) : firstLanes16(D - d);
    __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, x + d), scale), shift);
    v = _mm512_mul_ps(v, weight != nullptr ? _mm512_maskz_loadu_ps(lanes, weight + d) : one);
    if (bias != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(lanes, bias + d));
    _mm512_mask_storeu_ps(y + d, lanes, v);
  }
}

// The same three passes 8 columns at a time, for CPUs with AVX2 and no AVX-512; tails through masked loads.
// The first `count` lanes (all 8 from 8 on), as AVX2's masked loads and stores take them.
FIREBRAND_AVX2 __m256i firstLanes8(int64_t count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::min<int64_t>(count, 8))),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

template <bool Squares>
FIREBRAND_AVX2 __m256 term8(__m256 x, __m256 centre) {
  if constexpr (!Squares) return x;
  const __m256 deviation = _mm256_sub_ps(x, centre);
  return _mm256_mul_ps(deviation, deviation);
}

template <bool Squares>
FIREBRAND_AVX2 float rowSum8(const float* x, int64_t D, __m256 centre) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0;
  int64_t d = 0;
  for (; d + 16 <= D; d += 16) {
    a0 = _mm256_add_ps(a0, term8<Squares>(_mm256_loadu_ps(x + d), centre));
    a1 = _mm256_add_ps(a1, term8<Squares>(_mm256_loadu_ps(x + d + 8), centre));
  }
  for (; d < D; d += 8) {
    const __m256i lanes = firstLanes8(D - d);
    const __m256 value = term8<Squares>(_mm256_maskload_ps(x + d, lanes), centre);
    a0 = _mm256_add_ps(a0, _mm256_and_ps(value, _mm256_castsi256_ps(lanes)));
  }
  return sum8(_mm256_add_ps(a0, a1));
}

FIREBRAND_AVX2 void normalizeRow8(const float* x, float* y, int64_t D, const float* weight, const float* bias,
                                  float eps) {
  const float mean = rowSum8<false>(x, D, _mm256_setzero_ps()) / static_cast<float>(D);
  const float variance = rowSum8<true>(x, D, _mm256_set1_ps(mean)) / static_cast<float>(D);
  const float rstd = 1.0f / std::sqrt(std::max(variance, 0.0f) + eps);
  const __m256 scale = _mm256_set1_ps(rstd), shift = _mm256_set1_ps(-mean * rstd), one = _mm256_set1_ps(1.0f);
  for (int64_t d = 0; d < D; d += 8) {
    const __m256i lanes = firstLanes8(D - d);
    __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_maskload_ps(x + d, lanes), scale), shift);
    v = _mm256_mul_ps(v, weight != nullptr ? _mm256_maskload_ps(weight + d, lanes) : one);
    if (bias != nullptr) v = _mm256_add_ps(v, _mm256_maskload_ps(bias + d, lanes));
    _mm256_maskstore_ps(y + d, lanes, v);
  }
}
#endif

bool affineOperand(const at::Tensor& t, int64_t size) {
  return !t.defined() || (isCpuFloat(t) && t.dim() == 1 && t.size(0) == size);
}

}  // namespace

bool layerNormRowsFits(const at::Tensor& input, int64_t normalizedSize, const at::Tensor& weight,
                       const at::Tensor& bias) {
#if defined(__x86_64__)
  return cpuHasFma() && input.defined() && isCpuFloat(input) && input.dim() >= 1 && input.numel() > 0 &&
         input.size(-1) == normalizedSize && !at::GradMode::is_enabled() && affineOperand(weight, normalizedSize) &&
         affineOperand(bias, normalizedSize);
#else
  return false;
#endif
}

at::Tensor layerNormRows(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias, double eps) {
  const at::Tensor x = input.contiguous();
  at::Tensor y = at::empty_like(x);
#if defined(__x86_64__)
  const int64_t D = x.size(-1), rows = x.numel() / D;
  const at::Tensor w = weight.defined() ? weight.contiguous() : weight, b = bias.defined() ? bias.contiguous() : bias;
  const float* in = x.data_ptr<float>();
  float* out = y.data_ptr<float>();
  const float* wp = w.defined() ? w.data_ptr<float>() : nullptr;
  const float* bp = b.defined() ? b.data_ptr<float>() : nullptr;
  // Rows of ~16K values a task: GPT-mini's batch-1 [128, 128] stays on one thread.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / D);
  const auto normalize = cpuHasAvx512() ? normalizeRow16 : normalizeRow8;
  at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) normalize(in + r * D, out + r * D, D, wp, bp, static_cast<float>(eps));
  });
#endif
  return y;
}

}  // namespace firebrand

// A softmax's exponentials over float32 values, 16 or 8 at a time: decoding's attention takes one per
// head and cached position (540k a token at 2,000 positions on a 135M model), which std::exp one at a time
// made most of a long context's attention. Cephes' expf (range reduction by ln 2, a degree-6 polynomial):
// within 1 ulp of double-precision exp over [-87.3, 0] (checked at 878,736 points, both versions); for
// x <= 88 only (a softmax's x - max). Below float's smallest normal (-87.3) it gives 0, -inf included;
// NaN stays NaN.
#pragma once
#include <cmath>
#include <cstdint>

#include "core/runtime/cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace firebrand {

namespace exp_constants {
constexpr float kLowest = -87.33654f;  // ln of float's smallest normal
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2High = 0.693359375f;
constexpr float kLn2Low = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f, kP3 = 4.1665795894e-2f,
                kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;
}  // namespace exp_constants

inline float expScalar(float x) { return x < exp_constants::kLowest ? 0.0f : std::exp(x); }

#if defined(__x86_64__)
#define FIREBRAND_EXP_AVX2 __attribute__((target("avx2,fma")))
#define FIREBRAND_EXP_AVX512 __attribute__((target("avx512f,avx2,fma")))

FIREBRAND_EXP_AVX2 inline __m256 exp8(__m256 x) {
  using namespace exp_constants;
  const __m256 below = _mm256_cmp_ps(x, _mm256_set1_ps(kLowest), _CMP_LT_OQ);
  x = _mm256_max_ps(_mm256_set1_ps(kLowest), x);  // NaN stays (max returns its second operand)
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2High), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Low), r);
  __m256 p = _mm256_set1_ps(kP0);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP5));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i exponent = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(below, _mm256_mul_ps(p, _mm256_castsi256_ps(exponent)));
}

FIREBRAND_EXP_AVX512 inline __m512 exp16(__m512 x) {
  using namespace exp_constants;
  const __mmask16 below = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kLowest), _CMP_LT_OQ);
  x = _mm512_max_ps(_mm512_set1_ps(kLowest), x);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2High), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Low), r);
  __m512 p = _mm512_set1_ps(kP0);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP5));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  const __m512i exponent = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_maskz_mul_ps(static_cast<__mmask16>(~below), p, _mm512_castsi512_ps(exponent));
}

FIREBRAND_EXP_AVX2 inline float expShiftedAvx2(float* values, int64_t n, float shift) {
  __m256 sum = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(values + i), _mm256_set1_ps(shift)));
    _mm256_storeu_ps(values + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  float total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  for (; i < n; ++i) total += (values[i] = expScalar(values[i] - shift));
  return total;
}

FIREBRAND_EXP_AVX512 inline float expShiftedAvx512(float* values, int64_t n, float shift) {
  __m512 sum = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(values + i), _mm512_set1_ps(shift)));
    _mm512_storeu_ps(values + i, e);
    sum = _mm512_add_ps(sum, e);
  }
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, values + i), _mm512_set1_ps(shift)));
    _mm512_mask_storeu_ps(values + i, tail, e);
    sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(tail, e));
  }
  return _mm512_reduce_add_ps(sum);
}
#endif

// values[i] = exp(values[i] - shift) for i < n (as above); returns their sum.
inline float expShifted(float* values, int64_t n, float shift) {
#if defined(__x86_64__)
  if (cpuHasAvx512()) return expShiftedAvx512(values, n, shift);
  if (cpuHasFma()) return expShiftedAvx2(values, n, shift);
#endif
  float total = 0;
  for (int64_t i = 0; i < n; ++i) total += (values[i] = expScalar(values[i] - shift));
  return total;
}

}  // namespace firebrand

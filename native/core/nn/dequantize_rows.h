// One int8 weight row times its scale, into float32 or bfloat16, in one pass: the bits that
// values.to(kFloat).mul_(scale).to(dtype) gives in three (a float multiply, then bfloat16's
// round to nearest even, as c10::BFloat16's conversion; a finite product is never NaN).
// int8 layers widen their weight this way in every forward and backward pass (nn/int8_weights).
// AVX2 or AVX-512 where the CPU has them (runtime/cpu_features), a portable loop elsewhere.
#pragma once
#include <c10/util/BFloat16.h>

#include <cstdint>

#include "core/nn/simd_rows.h"

namespace firebrand {

inline void dequantizeRowScalar(const int8_t* values, int64_t K, float scale, float* out) {
  for (int64_t k = 0; k < K; ++k) out[k] = static_cast<float>(values[k]) * scale;
}
inline void dequantizeRowScalar(const int8_t* values, int64_t K, float scale, c10::BFloat16* out) {
  for (int64_t k = 0; k < K; ++k) out[k] = c10::BFloat16(static_cast<float>(values[k]) * scale);
}

#if defined(__x86_64__)
// float32 bits to bfloat16's, rounded to nearest even, in the low half of each lane.
FIREBRAND_AVX2 inline __m256i bfloat16Bits(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  return _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff))), 16);
}

FIREBRAND_AVX2 inline void dequantizeRowAvx2(const int8_t* values, int64_t K, float scale, float* out) {
  const __m256 s = _mm256_set1_ps(scale);
  int64_t k = 0;
  for (; k + 8 <= K; k += 8) _mm256_storeu_ps(out + k, _mm256_mul_ps(load8(values + k), s));
  dequantizeRowScalar(values + k, K - k, scale, out + k);
}
FIREBRAND_AVX2 inline void dequantizeRowAvx2(const int8_t* values, int64_t K, float scale, c10::BFloat16* out) {
  const __m256 s = _mm256_set1_ps(scale);
  int64_t k = 0;
  for (; k + 16 <= K; k += 16) {
    const __m256i low = bfloat16Bits(_mm256_mul_ps(load8(values + k), s));
    const __m256i high = bfloat16Bits(_mm256_mul_ps(load8(values + k + 8), s));
    // packus interleaves the halves' 128-bit lanes; the permute puts them back in order.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(low, high), 0xd8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k), packed);
  }
  dequantizeRowScalar(values + k, K - k, scale, out + k);
}

FIREBRAND_AVX512 inline void dequantizeRowAvx512(const int8_t* values, int64_t K, float scale, float* out) {
  const __m512 s = _mm512_set1_ps(scale);
  int64_t k = 0;
  for (; k + 16 <= K; k += 16) _mm512_storeu_ps(out + k, _mm512_mul_ps(load16(values + k), s));
  dequantizeRowScalar(values + k, K - k, scale, out + k);
}
FIREBRAND_AVX512 inline void dequantizeRowAvx512(const int8_t* values, int64_t K, float scale, c10::BFloat16* out) {
  const __m512 s = _mm512_set1_ps(scale);
  int64_t k = 0;
  for (; k + 16 <= K; k += 16) {
    const __m512i bits = _mm512_castps_si512(_mm512_mul_ps(load16(values + k), s));
    const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k), _mm512_cvtepi32_epi16(_mm512_srli_epi32(rounded, 16)));
  }
  dequantizeRowScalar(values + k, K - k, scale, out + k);
}
#endif

// out[k] = values[k] * scale for k < K, in float32 or bfloat16.
template <typename O>
void dequantizeRow(const int8_t* values, int64_t K, float scale, O* out) {
#if defined(__x86_64__)
  if (cpuHasAvx512()) return dequantizeRowAvx512(values, K, scale, out);
  if (cpuHasFma()) return dequantizeRowAvx2(values, K, scale, out);
#endif
  dequantizeRowScalar(values, K, scale, out);
}

}  // namespace firebrand

// Row kernels the decoding paths share (nn/streamed_linear, nn/decode_attention): a dot
// product of a weight or key row (float32, bfloat16 or int8, widened in registers) with
// float32 values, and value rows summed with float32 weights. AVX2+FMA where the CPU has
// them (runtime/cpu_features), a portable loop elsewhere.
#pragma once
#include <c10/util/BFloat16.h>

#include <algorithm>
#include <cstdint>

#include "core/runtime/cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace firebrand {

inline float widen(float value) { return value; }
inline float widen(c10::BFloat16 value) { return static_cast<float>(value); }
inline float widen(int8_t value) { return static_cast<float>(value); }

template <typename W>
float dotScalar(const W* weight, int64_t K, const float* x) {
  float sum = 0;
  for (int64_t k = 0; k < K; ++k) sum += widen(weight[k]) * x[k];
  return sum;
}

#if defined(__x86_64__)
#define FIREBRAND_AVX2 __attribute__((target("avx2,fma")))

FIREBRAND_AVX2 inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
FIREBRAND_AVX2 inline __m256 load8(const c10::BFloat16* p) {
  // bfloat16 is float32's upper half: widen by a shift.
  const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(halves), 16));
}
FIREBRAND_AVX2 inline __m256 load8(const int8_t* p) {
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
}
FIREBRAND_AVX2 inline float sum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
}

// One weight row read front to back, four sums in flight. (Several rows at a time are short
// streams, a row's length apart, that the prefetcher does not follow: a third of the bandwidth.)
template <typename W>
FIREBRAND_AVX2 float dotAvx2(const W* weight, int64_t K, const float* x) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t k = 0;
  for (; k + 32 <= K; k += 32) {
    a0 = _mm256_fmadd_ps(load8(weight + k), _mm256_loadu_ps(x + k), a0);
    a1 = _mm256_fmadd_ps(load8(weight + k + 8), _mm256_loadu_ps(x + k + 8), a1);
    a2 = _mm256_fmadd_ps(load8(weight + k + 16), _mm256_loadu_ps(x + k + 16), a2);
    a3 = _mm256_fmadd_ps(load8(weight + k + 24), _mm256_loadu_ps(x + k + 24), a3);
  }
  float sum = sum8(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  for (; k < K; ++k) sum += widen(weight[k]) * x[k];
  return sum;
}

#define FIREBRAND_AVX512 __attribute__((target("avx512f,avx2,fma")))

FIREBRAND_AVX512 inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
FIREBRAND_AVX512 inline __m512 load16(const c10::BFloat16* p) {
  const __m256i halves = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(halves), 16));
}
FIREBRAND_AVX512 inline __m512 load16(const int8_t* p) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes));
}

// dotAvx2 with 16 lanes: half the instructions a row, which bfloat16 and int8 rows (widened in
// registers) are bound by more than by memory.
template <typename W>
FIREBRAND_AVX512 float dotAvx512(const W* weight, int64_t K, const float* x) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t k = 0;
  for (; k + 64 <= K; k += 64) {
    a0 = _mm512_fmadd_ps(load16(weight + k), _mm512_loadu_ps(x + k), a0);
    a1 = _mm512_fmadd_ps(load16(weight + k + 16), _mm512_loadu_ps(x + k + 16), a1);
    a2 = _mm512_fmadd_ps(load16(weight + k + 32), _mm512_loadu_ps(x + k + 32), a2);
    a3 = _mm512_fmadd_ps(load16(weight + k + 48), _mm512_loadu_ps(x + k + 48), a3);
  }
  for (; k + 16 <= K; k += 16) a0 = _mm512_fmadd_ps(load16(weight + k), _mm512_loadu_ps(x + k), a0);
  float sum = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
  for (; k < K; ++k) sum += widen(weight[k]) * x[k];
  return sum;
}
#endif

// out[d] = Σ_t weights[t] · rows[t · stride + d] for d < D over `count` rows widened to float32, each sum
// taken in row order; a zero weight's row is skipped (a masked position). The sums stay in registers
// across the rows: a decoding step's attention adds hundreds of value rows per head.
template <typename W>
void weightedRowsScalar(const float* weights, const W* rows, int64_t stride, int64_t count, int64_t D, float* out) {
  std::fill(out, out + D, 0.0f);
  for (int64_t t = 0; t < count; ++t) {
    if (weights[t] == 0) continue;
    for (int64_t d = 0; d < D; ++d) out[d] += weights[t] * widen(rows[t * stride + d]);
  }
}

#if defined(__x86_64__)
template <typename W>
FIREBRAND_AVX2 void weightedRowsAvx2(const float* weights, const W* rows, int64_t stride, int64_t count, int64_t D,
                                     float* out) {
  int64_t d = 0;
  for (; d + 32 <= D; d += 32) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t t = 0; t < count; ++t) {
      if (weights[t] == 0) continue;
      const __m256 a = _mm256_set1_ps(weights[t]);
      const W* row = rows + t * stride + d;
      s0 = _mm256_fmadd_ps(a, load8(row), s0);
      s1 = _mm256_fmadd_ps(a, load8(row + 8), s1);
      s2 = _mm256_fmadd_ps(a, load8(row + 16), s2);
      s3 = _mm256_fmadd_ps(a, load8(row + 24), s3);
    }
    _mm256_storeu_ps(out + d, s0);
    _mm256_storeu_ps(out + d + 8, s1);
    _mm256_storeu_ps(out + d + 16, s2);
    _mm256_storeu_ps(out + d + 24, s3);
  }
  if (d < D) weightedRowsScalar(weights, rows + d, stride, count, D - d, out + d);
}

// weightedRowsAvx2 with 16 lanes: 64 columns a pass.
template <typename W>
FIREBRAND_AVX512 void weightedRowsAvx512(const float* weights, const W* rows, int64_t stride, int64_t count, int64_t D,
                                         float* out) {
  int64_t d = 0;
  for (; d + 64 <= D; d += 64) {
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t t = 0; t < count; ++t) {
      if (weights[t] == 0) continue;
      const __m512 a = _mm512_set1_ps(weights[t]);
      const W* row = rows + t * stride + d;
      s0 = _mm512_fmadd_ps(a, load16(row), s0);
      s1 = _mm512_fmadd_ps(a, load16(row + 16), s1);
      s2 = _mm512_fmadd_ps(a, load16(row + 32), s2);
      s3 = _mm512_fmadd_ps(a, load16(row + 48), s3);
    }
    _mm512_storeu_ps(out + d, s0);
    _mm512_storeu_ps(out + d + 16, s1);
    _mm512_storeu_ps(out + d + 32, s2);
    _mm512_storeu_ps(out + d + 48, s3);
  }
  if (d < D) weightedRowsAvx2(weights, rows + d, stride, count, D - d, out + d);
}
#endif

template <typename W>
inline float dotRow(const W* weight, int64_t K, const float* x) {
#if defined(__x86_64__)
  if (cpuHasAvx512()) return dotAvx512(weight, K, x);
  if (cpuHasFma()) return dotAvx2(weight, K, x);
#endif
  return dotScalar(weight, K, x);
}

template <typename W>
inline void weightedRows(const float* weights, const W* rows, int64_t stride, int64_t count, int64_t D, float* out) {
#if defined(__x86_64__)
  if (cpuHasAvx512()) return weightedRowsAvx512(weights, rows, stride, count, D, out);
  if (cpuHasFma()) return weightedRowsAvx2(weights, rows, stride, count, D, out);
#endif
  weightedRowsScalar(weights, rows, stride, count, D, out);
}

}  // namespace firebrand

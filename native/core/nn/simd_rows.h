// Row kernels the decoding paths share (nn/streamed_linear, nn/decode_attention): a dot
// product of a weight or key row (float32, bfloat16 or int8, widened in registers) with
// float32 values, and a scaled row added into float32 sums. AVX2+FMA where the CPU has
// them (runtime/cpu_features), a portable loop elsewhere.
#pragma once
#include <c10/util/BFloat16.h>

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

// sum[k] += a * row[k] for k < K, the row widened to float32.
template <typename W>
void addScaledRowScalar(float a, const W* row, int64_t K, float* sum) {
  for (int64_t k = 0; k < K; ++k) sum[k] += a * widen(row[k]);
}

#if defined(__x86_64__)
template <typename W>
FIREBRAND_AVX2 void addScaledRowAvx2(float a, const W* row, int64_t K, float* sum) {
  const __m256 scale = _mm256_set1_ps(a);
  int64_t k = 0;
  for (; k + 8 <= K; k += 8)
    _mm256_storeu_ps(sum + k, _mm256_fmadd_ps(scale, load8(row + k), _mm256_loadu_ps(sum + k)));
  for (; k < K; ++k) sum[k] += a * widen(row[k]);
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
inline void addScaledRow(float a, const W* row, int64_t K, float* sum) {
#if defined(__x86_64__)
  if (cpuHasFma()) return addScaledRowAvx2(a, row, K, sum);
#endif
  addScaledRowScalar(a, row, K, sum);
}

}  // namespace firebrand

#include "core/nn/key_blocks.h"

#include <ATen/ATen.h>
#include <c10/util/BFloat16.h>

#include <algorithm>

#include "core/nn/simd_rows.h"

namespace firebrand {
namespace {

int64_t wholeBlocks(int64_t positions) { return (positions + kKeyBlock - 1) / kKeyBlock; }

// The 16 scores of one block [D, 16]: query[d] times row d, summed over d.
template <typename T>
void blockScoresScalar(const T* block, const float* query, int64_t D, float* scores) {
  std::fill(scores, scores + kKeyBlock, 0.0f);
  for (int64_t d = 0; d < D; ++d) {
    for (int64_t lane = 0; lane < kKeyBlock; ++lane) scores[lane] += query[d] * widen(block[d * kKeyBlock + lane]);
  }
}

#if defined(__x86_64__)
template <typename T>
FIREBRAND_AVX2 void blockScoresAvx2(const T* block, const float* query, int64_t D, float* scores) {
  __m256 low0 = _mm256_setzero_ps(), low1 = low0, high0 = low0, high1 = low0;
  int64_t d = 0;
  for (; d + 2 <= D; d += 2) {
    const __m256 q0 = _mm256_set1_ps(query[d]), q1 = _mm256_set1_ps(query[d + 1]);
    const T* row = block + d * kKeyBlock;
    low0 = _mm256_fmadd_ps(q0, load8(row), low0);
    high0 = _mm256_fmadd_ps(q0, load8(row + 8), high0);
    low1 = _mm256_fmadd_ps(q1, load8(row + kKeyBlock), low1);
    high1 = _mm256_fmadd_ps(q1, load8(row + kKeyBlock + 8), high1);
  }
  if (d < D) {
    const __m256 q0 = _mm256_set1_ps(query[d]);
    low0 = _mm256_fmadd_ps(q0, load8(block + d * kKeyBlock), low0);
    high0 = _mm256_fmadd_ps(q0, load8(block + d * kKeyBlock + 8), high0);
  }
  _mm256_storeu_ps(scores, _mm256_add_ps(low0, low1));
  _mm256_storeu_ps(scores + 8, _mm256_add_ps(high0, high1));
}

template <typename T>
FIREBRAND_AVX512 void blockScoresAvx512(const T* block, const float* query, int64_t D, float* scores) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t d = 0;
  for (; d + 4 <= D; d += 4) {
    const T* row = block + d * kKeyBlock;
    a0 = _mm512_fmadd_ps(_mm512_set1_ps(query[d]), load16(row), a0);
    a1 = _mm512_fmadd_ps(_mm512_set1_ps(query[d + 1]), load16(row + kKeyBlock), a1);
    a2 = _mm512_fmadd_ps(_mm512_set1_ps(query[d + 2]), load16(row + 2 * kKeyBlock), a2);
    a3 = _mm512_fmadd_ps(_mm512_set1_ps(query[d + 3]), load16(row + 3 * kKeyBlock), a3);
  }
  for (; d < D; ++d) a0 = _mm512_fmadd_ps(_mm512_set1_ps(query[d]), load16(block + d * kKeyBlock), a0);
  _mm512_storeu_ps(scores, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}
#endif

template <typename T>
void blockScores(const T* block, const float* query, int64_t D, float* scores) {
#if defined(__x86_64__)
  if (cpuHasAvx512()) return blockScoresAvx512(block, query, D, scores);
  if (cpuHasFma()) return blockScoresAvx2(block, query, D, scores);
#endif
  blockScoresScalar(block, query, D, scores);
}

template <typename T>
void scoresOf(const at::Tensor& blocks, int64_t b, int64_t h, const float* query, int64_t first, int64_t total,
              float scale, float* scores) {
  const int64_t D = blocks.size(3), count = blocks.size(2);
  const T* head = blocks.data_ptr<T>() + (b * blocks.size(1) + h) * count * D * kKeyBlock;
  float lanes[kKeyBlock];
  for (int64_t block = first / kKeyBlock; block * kKeyBlock < total; ++block) {
    blockScores(head + block * D * kKeyBlock, query, D, lanes);
    const int64_t start = block * kKeyBlock;
    for (int64_t t = std::max(first, start); t < std::min(total, start + kKeyBlock); ++t)
      scores[t] = lanes[t - start] * scale;
  }
}

}  // namespace

at::Tensor emptyKeyBlocks(int64_t batch, int64_t kvHeads, int64_t capacity, int64_t headDim,
                          const at::TensorOptions& options) {
  // Zeros: a block's lanes past the length held are multiplied too (and dropped), never garbage.
  return at::zeros({batch, kvHeads, wholeBlocks(capacity), headDim, kKeyBlock}, options);
}

int64_t keyBlocksCapacity(const at::Tensor& blocks) { return blocks.size(2) * kKeyBlock; }

at::Tensor keyBlocksOf(const at::Tensor& keys, int64_t capacity) {
  const int64_t B = keys.size(0), H = keys.size(1), length = keys.size(2), D = keys.size(3);
  const int64_t blocks = wholeBlocks(std::max(capacity, length));
  at::Tensor positions = at::zeros({B, H, blocks * kKeyBlock, D}, keys.options());
  positions.narrow(2, 0, length).copy_(keys);
  return positions.view({B, H, blocks, kKeyBlock, D}).transpose(3, 4).contiguous();
}

at::Tensor keyPositions(const at::Tensor& blocks) {
  return blocks.transpose(3, 4).reshape({blocks.size(0), blocks.size(1), keyBlocksCapacity(blocks), blocks.size(3)});
}

void writeKey(at::Tensor& blocks, int64_t b, int64_t h, int64_t at, const float* key) {
  const int64_t D = blocks.size(3);
  const int64_t offset = ((b * blocks.size(1) + h) * blocks.size(2) + at / kKeyBlock) * D * kKeyBlock + at % kKeyBlock;
  const auto write = [&](auto* out) {
    using T = std::remove_pointer_t<decltype(out)>;
    for (int64_t d = 0; d < D; ++d) out[offset + d * kKeyBlock] = T(key[d]);
  };
  if (blocks.scalar_type() == at::kFloat)
    write(blocks.data_ptr<float>());
  else
    write(blocks.data_ptr<c10::BFloat16>());
}

void keyScores(const at::Tensor& blocks, int64_t b, int64_t h, const float* query, int64_t first, int64_t total,
               float scale, float* scores) {
  if (blocks.scalar_type() == at::kFloat)
    scoresOf<float>(blocks, b, h, query, first, total, scale, scores);
  else
    scoresOf<c10::BFloat16>(blocks, b, h, query, first, total, scale, scores);
}

}  // namespace firebrand

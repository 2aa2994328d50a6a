#include "core/nn/inference_attention.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/nn/cpu_float.h"
#include "core/nn/key_blocks.h"
#include "core/nn/simd_exp.h"
#include "core/nn/simd_rows.h"

namespace firebrand {
namespace {

constexpr int64_t kTile = 8;      // queries a tile
constexpr int64_t kRowGroup = 4;  // queries weighting the value rows together
constexpr int64_t kChunk = 64;    // output columns a pass over the value rows (4 registers)

// One head's operands: queries [L, D] (rows D apart), key blocks [S / 16, D, 16], value rows `valueStride` apart.
struct HeadOperands {
  const float* queries;
  const float* keyBlocks;
  const float* values;
  int64_t valueStride;
  int64_t L, S, D;
  std::optional<int64_t> causalOffset;
  float scale;
};

// Keys query i sees.
int64_t seenBy(const HeadOperands& head, int64_t i) {
  return head.causalOffset ? std::min(head.S, i + 1 + *head.causalOffset) : head.S;
}

#if defined(__x86_64__)
// scores[r][t] = scale * (query r · key t) for the tile's `rows` queries (from `first`) and keys t < keys (whole
// blocks), -inf where query r does not see key t; largest[r] the largest of row r.
FIREBRAND_AVX512 void tileScores(const HeadOperands& head, const float* queries, int64_t first, int64_t rows,
                                 int64_t keys, float* scores, int64_t scoreStride, float* largest) {
  const __m512 scale = _mm512_set1_ps(head.scale), hidden = _mm512_set1_ps(-INFINITY);
  __m512 most[kTile];
  for (auto& m : most) m = hidden;
  for (int64_t start = 0; start < keys; start += kKeyBlock) {
    const float* block = head.keyBlocks + start * head.D;
    __m512 sum[kTile];
    for (auto& s : sum) s = _mm512_setzero_ps();
    for (int64_t d = 0; d < head.D; ++d) {
      const __m512 key = _mm512_loadu_ps(block + d * kKeyBlock);
      for (int64_t r = 0; r < kTile; ++r)
        sum[r] = _mm512_fmadd_ps(_mm512_set1_ps(queries[r * head.D + d]), key, sum[r]);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t visible = std::clamp<int64_t>(seenBy(head, first + r) - start, 0, kKeyBlock);
      const __m512 row = _mm512_mask_mul_ps(hidden, static_cast<__mmask16>((1u << visible) - 1), sum[r], scale);
      _mm512_storeu_ps(scores + r * scoreStride + start, row);
      most[r] = _mm512_max_ps(most[r], row);
    }
  }
  for (int64_t r = 0; r < rows; ++r) largest[r] = _mm512_reduce_max_ps(most[r]);
}

// out[r] columns [column, column + 16 * Lanes) = normalizer[r] * the sum over t < keys of weights[r][t] * value
// row t, for kRowGroup rows. Lanes is a template argument so that the sums stay in registers.
template <int Lanes>
FIREBRAND_AVX512 void weightedValues(const HeadOperands& head, const float* weights, int64_t weightStride,
                                     const float* normalizer, int64_t keys, int64_t column, float* out) {
  __m512 sum[kRowGroup][Lanes];
  for (auto& row : sum)
    for (auto& s : row) s = _mm512_setzero_ps();
  for (int64_t t = 0; t < keys; ++t) {
    const float* value = head.values + t * head.valueStride + column;
    __m512 v[Lanes];
    for (int c = 0; c < Lanes; ++c) v[c] = _mm512_loadu_ps(value + 16 * c);
    for (int64_t r = 0; r < kRowGroup; ++r) {
      const __m512 weight = _mm512_set1_ps(weights[r * weightStride + t]);
      for (int c = 0; c < Lanes; ++c) sum[r][c] = _mm512_fmadd_ps(weight, v[c], sum[r][c]);
    }
  }
  for (int64_t r = 0; r < kRowGroup; ++r) {
    const __m512 factor = _mm512_set1_ps(normalizer[r]);
    for (int c = 0; c < Lanes; ++c)
      _mm512_storeu_ps(out + r * head.D + column + 16 * c, _mm512_mul_ps(sum[r][c], factor));
  }
}

// Every column of kRowGroup output rows, 64 at a time.
void weightedValueRows(const HeadOperands& head, const float* weights, int64_t weightStride, const float* normalizer,
                       int64_t keys, float* out) {
  for (int64_t column = 0; column < head.D; column += kChunk) {
    switch (std::min<int64_t>(kChunk, head.D - column) / 16) {
      case 1:
        weightedValues<1>(head, weights, weightStride, normalizer, keys, column, out);
        break;
      case 2:
        weightedValues<2>(head, weights, weightStride, normalizer, keys, column, out);
        break;
      case 3:
        weightedValues<3>(head, weights, weightStride, normalizer, keys, column, out);
        break;
      default:
        weightedValues<4>(head, weights, weightStride, normalizer, keys, column, out);
    }
  }
}
#endif

// Queries [first, first + kTile) of one head (those below L) into out's rows.
void attendTile(const HeadOperands& head, int64_t first, std::vector<float>& scratch, float* out) {
#if defined(__x86_64__)
  const int64_t rows = std::min(kTile, head.L - first), D = head.D;
  const int64_t keys = seenBy(head, first + rows - 1);
  const int64_t stride = (keys + kKeyBlock - 1) / kKeyBlock * kKeyBlock;
  // Its scores; for a tile past L's end, its queries padded with zeros and whole groups of output rows.
  scratch.resize(kTile * stride + 2 * kTile * D);
  float *scores = scratch.data(), *padded = scores + kTile * stride, *rowsOut = padded + kTile * D;
  const float* queries = head.queries + first * D;
  if (rows < kTile) {
    std::fill(std::copy(queries, queries + rows * D, padded), padded + kTile * D, 0.0f);
    queries = padded;
  }
  float largest[kTile] = {}, normalizer[kTile] = {};
  tileScores(head, queries, first, rows, keys, scores, stride, largest);
  for (int64_t r = 0; r < rows; ++r) normalizer[r] = 1.0f / expShifted(scores + r * stride, stride, largest[r]);
  for (int64_t group = 0; group < rows; group += kRowGroup) {
    const bool whole = group + kRowGroup <= rows;
    weightedValueRows(head, scores + group * stride, stride, normalizer + group, keys,
                      whole ? out + group * D : rowsOut);
    if (!whole) std::copy(rowsOut, rowsOut + (rows - group) * D, out + group * D);
  }
#endif
}

}  // namespace

bool inferenceAttentionFits(const at::Tensor& query, const at::Tensor& keys, const at::Tensor& values) {
  const auto plain = [](const at::Tensor& t) {
    return t.defined() && isCpuFloat(t) && t.layout() == at::kStrided && t.dim() >= 2 && t.stride(-1) == 1 &&
           !(at::GradMode::is_enabled() && t.requires_grad());
  };
  if (!cpuHasAvx512() || !plain(query) || !plain(keys) || !plain(values)) return false;
  const auto leading = query.sizes().slice(0, query.dim() - 2);
  return keys.dim() == query.dim() && values.dim() == query.dim() &&
         keys.sizes().slice(0, keys.dim() - 2).equals(leading) &&
         values.sizes().slice(0, values.dim() - 2).equals(leading) && keys.size(-1) == query.size(-1) &&
         values.size(-1) == query.size(-1) && values.size(-2) == keys.size(-2) && keys.size(-2) > 0 &&
         query.size(-2) > 0 && query.size(-1) > 0 && query.size(-1) % 16 == 0;
}

at::Tensor inferenceAttention(const at::Tensor& query, const at::Tensor& keys, const at::Tensor& values,
                              std::optional<int64_t> causalOffset, double scale) {
  const int64_t L = query.size(-2), S = keys.size(-2), D = query.size(-1);
  // Heads (all leading dims) flattened: views where the strides allow, else copies.
  const at::Tensor q = query.reshape({-1, L, D}).contiguous();
  const int64_t heads = q.size(0), tiles = (L + kTile - 1) / kTile;
  const at::Tensor keyBlocks = keyBlocksOf(keys.reshape({1, heads, S, D}), S);
  const at::Tensor v = values.reshape({heads, S, D});
  at::Tensor out = at::empty({heads, L, D}, q.options());
  const int64_t blockStride = keyBlocks.size(2) * D * kKeyBlock;
  at::parallel_for(0, heads * tiles, 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> scratch;  // kept: a prediction runs this for every layer
    for (int64_t task = begin; task < end; ++task) {
      // Tiles in the order first, last, second, next to last...: under a causal mask the later tiles see more
      // keys, and each kernel thread takes a contiguous run of tasks.
      const int64_t h = task / tiles, k = task % tiles;
      const int64_t first = (k % 2 == 0 ? k / 2 : tiles - 1 - k / 2) * kTile;
      const HeadOperands head{q.data_ptr<float>() + h * L * D,
                              keyBlocks.data_ptr<float>() + h * blockStride,
                              v.data_ptr<float>() + h * v.stride(0),
                              v.stride(1),
                              L,
                              S,
                              D,
                              causalOffset,
                              static_cast<float>(scale)};
      attendTile(head, first, scratch, out.data_ptr<float>() + (h * L + first) * D);
    }
  });
  return out.view(query.sizes());
}

}  // namespace firebrand

// The keys a decoder layer holds while decoding, in blocks of 16 positions, each block [headDim, 16]:
// a query's scores over 16 positions are then headDim vector multiply-adds, with no sum across lanes
// per position (a row-major key needs one for each). The blocks are a tensor [batch, kvHeads,
// capacity / 16, headDim, 16] in the model's dtype; a position past the length held is never read.
#pragma once
#include <ATen/core/Tensor.h>

namespace firebrand {

constexpr int64_t kKeyBlock = 16;

// Blocks for `capacity` positions (rounded up to whole blocks) of [batch, kvHeads, capacity, headDim] keys.
at::Tensor emptyKeyBlocks(int64_t batch, int64_t kvHeads, int64_t capacity, int64_t headDim,
                          const at::TensorOptions& options);
int64_t keyBlocksCapacity(const at::Tensor& blocks);

// keys [batch, kvHeads, length, headDim] (any strides) as blocks with room for `capacity` positions.
at::Tensor keyBlocksOf(const at::Tensor& keys, int64_t capacity);
// The blocks' keys as [batch, kvHeads, capacity, headDim] (a copy).
at::Tensor keyPositions(const at::Tensor& blocks);

// Writes float32 `key` [headDim] as position `at` of (sequence b, kv head h), rounded to the blocks' dtype.
void writeKey(at::Tensor& blocks, int64_t b, int64_t h, int64_t at, const float* key);

// scores[t] = scale * (query · key t) for t in [first, total) of (sequence b, kv head h); query [headDim].
void keyScores(const at::Tensor& blocks, int64_t b, int64_t h, const float* query, int64_t first, int64_t total,
               float scale, float* scores);

}  // namespace firebrand

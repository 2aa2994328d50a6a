// Attention for one new query per sequence over a key/value cache (a decoding step),
// on the CPU in float32 or bfloat16 (summed in float32, as PyTorch's CPU kernel does): per head, the query's dot
// product with each cached key row, a softmax, and the value rows summed with those weights, in one pass of plain
// loops. at::matmul sends these tiny products to BLAS, which packs its operands for each head of each layer at every
// token: ~15% of a decoding step on a 135M model.
#pragma once
#include <ATen/core/Tensor.h>

#include <optional>

namespace firebrand {

// Whether decodeAttention takes these: float32 or bfloat16 CPU tensors of one dtype without autograd, one query
// ([..., 1, D]), keys and values [..., T, D] with the query's leading sizes and unit stride on D.
bool decodeAttentionFits(const at::Tensor& query, const at::Tensor& keys, const at::Tensor& values);
// softmax(query keys^T * scale) values: [..., 1, D], every key visible.
at::Tensor decodeAttention(const at::Tensor& query, const at::Tensor& keys, const at::Tensor& values, double scale);

}  // namespace firebrand

// Attention of several queries at inference (a prediction's sequences, a prompt), float32 on the CPU, with
// every key visible or a causal triangle, where the CPU has AVX-512: per head, tiles of 8 queries against the
// keys laid out in blocks of 16 positions (key_blocks.h), each tile's scores an outer-product kernel as a matrix
// product's is (the keys a tile cannot see skipped), a vectorized softmax (simd_exp.h), and its output rows the
// value rows weighted by 4 queries at a time. PyTorch's CPU flash attention ran GPT-mini's causal
// [1, 4, 128, 32] in ~100 us (libtorch 2.14): its blocks suit long sequences.
#pragma once
#include <ATen/core/Tensor.h>

#include <optional>

namespace firebrand {

// Whether inferenceAttention takes these: the CPU has AVX-512 (runtime/cpu_features.h), float32 CPU tensors
// without autograd, query [..., L, D] and keys and values [..., S, D] (S > 0, D a multiple of 16) with the
// query's leading sizes, each with unit stride on D.
bool inferenceAttentionFits(const at::Tensor& query, const at::Tensor& keys, const at::Tensor& values);

// softmax(query keys^T * scale) values: [..., L, D]. With `causalOffset` (>= 0), query i sees keys
// 0 .. i + causalOffset only (0: PyTorch's is_causal, the triangle at the top left; S - L: the newest
// positions' queries over a cache); without, every key.
at::Tensor inferenceAttention(const at::Tensor& query, const at::Tensor& keys, const at::Tensor& values,
                              std::optional<int64_t> causalOffset, double scale);

}  // namespace firebrand

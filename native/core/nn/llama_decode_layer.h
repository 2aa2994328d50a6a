// One decoder layer of the Llama family (LlamaDecoderLayer: RMSNorm, rotary
// grouped-query attention over a key/value cache, RMSNorm, SwiGLU MLP, two
// residual adds) for one new position per sequence, in one native call: a
// decoding step's ~70 aten ops a layer cost as much as its weights' bytes on a
// 135M model. Plain loops over float32 sums; each value is rounded to the
// model's dtype where the ops would round it, so bfloat16 gives the ops' bits
// up to summation order. The linear layers read their weights once
// (nn/streamed_linear), float32, bfloat16 or int8.
#pragma once
#include <ATen/core/Tensor.h>

#include <optional>
#include <vector>

namespace firebrand {

struct LlamaLayerShape {
  int64_t heads = 0;
  int64_t kvHeads = 0;
  int64_t headDim = 0;
  double eps = 1e-6;
  std::optional<int64_t> window;  // each query sees its last `window` positions; none: all
};

// A linear layer's tensors: weight [N, K] (float, bfloat16, or int8 with scale [N]), bias [N] or undefined.
// A LoRA adapter (float32 A [r, K] and B [N, r], no DoRA) adds scaling * B A x, as PEFT's LoraLayer in eval.
struct DecodeLinear {
  at::Tensor weight;
  at::Tensor scale;  // float32 (int8 weights only)
  at::Tensor bias;   // float32
  at::Tensor loraA;
  at::Tensor loraB;
  double loraScaling = 0;
};

struct LlamaLayerWeights {
  at::Tensor inputNorm;  // [hidden], the model's dtype
  DecodeLinear q, k, v, o;
  at::Tensor postAttentionNorm;
  DecodeLinear gate, up, down;
};

// The layer's keys (in blocks: nn/key_blocks) and values [batch, kvHeads, capacity, headDim], in the model's
// dtype; `length` positions held.
struct LayerKeyValues {
  at::Tensor keys;
  at::Tensor values;
  int64_t length = 0;
};

// Whether the kernel takes x [B, 1, hidden] (float32 or bfloat16), cos and sin [1 or B, 1, headDim] of x's
// dtype, and an optional boolean mask [B, 1, 1, keys] with these weights: CPU tensors, no autograd.
bool llamaDecodeFits(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin,
                     const std::optional<at::Tensor>& mask, const LlamaLayerWeights& weights,
                     const LlamaLayerShape& shape);

// The layer's output [B, 1, hidden] for x, its new keys and values appended to `cache`. With a mask, key j of
// sequence b is seen where mask[b, 0, 0, j] (its last dim: the cached positions and the new one).
at::Tensor llamaDecodeLayer(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin,
                            const std::optional<at::Tensor>& mask, const LlamaLayerWeights& weights,
                            const LlamaLayerShape& shape, LayerKeyValues& cache);

// `cache` from the graph's attention entry (keys and values [B, heads, T, headDim], each kv head repeated
// heads / kvHeads times, as repeat_kv makes them), with room for more positions.
void adoptKeyValues(const at::Tensor& keys, const at::Tensor& values, const LlamaLayerShape& shape,
                    LayerKeyValues& cache);

}  // namespace firebrand

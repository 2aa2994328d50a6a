#include "core/nn/llama_decode_layer.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/nn/key_blocks.h"
#include "core/nn/simd_exp.h"
#include "core/nn/simd_rows.h"
#include "core/nn/streamed_linear.h"

namespace firebrand {
namespace {

// A value as the model's dtype T holds it: bfloat16 rounds to nearest even, as each op's result does.
template <typename T>
inline float rounded(float value) {
  return static_cast<float>(T(value));
}
template <>
inline float rounded<float>(float value) {
  return value;
}

template <typename T>
void roundAll(std::vector<float>& values) {
  if constexpr (!std::is_same_v<T, float>) {
    for (float& value : values) value = rounded<T>(value);
  }
}

// The float32 rows of one step, kept by the thread between layers and steps.
struct StepRows {
  std::vector<float> x, normed, q, k, v, attended, projected, h, gate, up;
};

// RMSNorm as rms_norm.cpp runs it: normalized in float32, rounded to T, then times the weight.
template <typename T>
void rmsNormRows(const std::vector<float>& x, int64_t H, const at::Tensor& weight, double eps,
                 std::vector<float>& out) {
  const T* w = weight.data_ptr<T>();
  out.resize(x.size());
  for (size_t row = 0; row * H < x.size(); ++row) {
    const float* in = x.data() + row * H;
    float squares = 0;
    for (int64_t i = 0; i < H; ++i) squares += in[i] * in[i];
    const float inverse = 1.0f / std::sqrt(squares / static_cast<float>(H) + static_cast<float>(eps));
    for (int64_t i = 0; i < H; ++i)
      out[row * H + i] = rounded<T>(rounded<T>(in[i] * inverse) * static_cast<float>(w[i]));
  }
}

// The layer's rows rounded to T; an adapter's update added in float32 to them and the sum rounded (lora.cpp).
template <typename T>
void linearRows(const DecodeLinear& layer, const std::vector<float>& x, int64_t B, std::vector<float>& out) {
  const int64_t N = layer.weight.size(0);
  out.resize(B * N);
  streamedRows(layer.weight, layer.scale.defined() ? layer.scale.data_ptr<float>() : nullptr,
               layer.bias.defined() ? layer.bias.data_ptr<float>() : nullptr, x.data(), B, out.data());
  roundAll<T>(out);
  if (!layer.loraA.defined()) return;
  thread_local std::vector<float> low, update;
  low.resize(B * layer.loraA.size(0));
  update.resize(B * N);
  streamedRows(layer.loraA, nullptr, nullptr, x.data(), B, low.data());
  streamedRows(layer.loraB, nullptr, nullptr, low.data(), B, update.data());
  const auto scaling = static_cast<float>(layer.loraScaling);
  for (int64_t i = 0; i < B * N; ++i) out[i] = rounded<T>(out[i] + update[i] * scaling);
}

// q·cos + rotate_half(q)·sin over each head of each row (rotary.ts), every product and the sum rounded to T.
template <typename T>
void rotate(std::vector<float>& rows, int64_t B, int64_t heads, int64_t D, const at::Tensor& cos,
            const at::Tensor& sin) {
  const T *c = cos.data_ptr<T>(), *s = sin.data_ptr<T>();
  const bool perRow = cos.size(0) > 1;
  const int64_t half = D / 2;
  std::vector<float> head(D);
  for (int64_t b = 0; b < B; ++b) {
    const T *cb = c + (perRow ? b * D : 0), *sb = s + (perRow ? b * D : 0);
    for (int64_t h = 0; h < heads; ++h) {
      float* v = rows.data() + (b * heads + h) * D;
      std::copy(v, v + D, head.begin());
      for (int64_t i = 0; i < D; ++i) {
        const float turned = i < half ? -head[i + half] : head[i - half];
        v[i] = rounded<T>(rounded<T>(head[i] * static_cast<float>(cb[i])) +
                          rounded<T>(turned * static_cast<float>(sb[i])));
      }
    }
  }
}

// Room for `positions` and as many more, in whole key blocks.
int64_t roomFor(int64_t positions) {
  const int64_t room = std::max<int64_t>(2 * positions, 64);
  return (room + kKeyBlock - 1) / kKeyBlock * kKeyBlock;
}

// Room for one more position; a sliding window keeps only the positions it can still see.
void makeRoom(LayerKeyValues& cache, std::optional<int64_t> window) {
  const int64_t capacity = cache.values.size(2);
  if (cache.length < capacity) return;
  const int64_t kept = window ? std::min(cache.length, *window - 1) : cache.length;
  std::vector<int64_t> sizes = cache.values.sizes().vec();
  sizes[2] = roomFor(kept + 1);
  at::Tensor values = at::empty(sizes, cache.values.options());
  values.narrow(2, 0, kept).copy_(cache.values.narrow(2, cache.length - kept, kept));
  cache.keys = keyBlocksOf(keyPositions(cache.keys).narrow(2, cache.length - kept, kept), sizes[2]);
  cache.values = values;
  cache.length = kept;
}

// The new position's keys (into their blocks) and values, rounded to T.
template <typename T>
void append(const StepRows& r, LayerKeyValues& cache, int64_t B, int64_t kvHeads, int64_t D) {
  T* values = cache.values.data_ptr<T>();
  const int64_t capacity = cache.values.size(2), at = cache.length;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < kvHeads; ++h) {
      const int64_t row = (b * kvHeads + h) * D;
      writeKey(cache.keys, b, h, at, r.k.data() + row);
      std::transform(r.v.data() + row, r.v.data() + row + D, values + ((b * kvHeads + h) * capacity + at) * D,
                     [](float v) { return T(v); });
    }
  }
}

// softmax(q keysᵀ / sqrt(D)) values for each query head, over the keys it may see (decode_attention.cpp's
// math: the query in float32, keys and values read in T, the output rounded to T).
template <typename T>
void attend(const std::vector<float>& q, const LayerKeyValues& cache, const std::optional<at::Tensor>& mask,
            const LlamaLayerShape& shape, int64_t B, std::vector<float>& out) {
  const int64_t D = shape.headDim, heads = shape.heads, group = heads / shape.kvHeads, total = cache.length;
  const int64_t capacity = cache.values.size(2);
  const int64_t first = shape.window && !mask ? std::max<int64_t>(0, total - *shape.window) : 0;
  const bool* seen = mask ? mask->data_ptr<bool>() : nullptr;
  const T* values = cache.values.data_ptr<T>();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
  out.resize(B * heads * D);
  at::parallel_for(0, B * heads, 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> weights;  // kept: a token runs this for every layer
    weights.resize(total);
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / heads, head = (row % heads) / group, kv = b * shape.kvHeads + head;
      keyScores(cache.keys, b, head, q.data() + row * D, first, total, scale, weights.data());
      float largest = -INFINITY;
      for (int64_t t = first; t < total; ++t) {
        if (seen && !seen[b * total + t]) weights[t] = -INFINITY;
        largest = std::max(largest, weights[t]);
      }
      const float normalizer = 1.0f / expShifted(weights.data() + first, total - first, largest);
      for (int64_t t = first; t < total; ++t) weights[t] *= normalizer;
      float* o = out.data() + row * D;
      weightedRows(weights.data() + first, values + (kv * capacity + first) * D, D, total - first, D, o);
      for (int64_t i = 0; i < D; ++i) o[i] = rounded<T>(o[i]);
    }
  });
}

// gate = silu(gate) * up, rounded to T. at::silu itself: how it rounds bfloat16 differs between libtorch
// versions (1.13 rounds after each of its steps, later ones once).
template <typename T>
void siluTimes(std::vector<float>& gate, const std::vector<float>& up) {
  at::Tensor activated =
      at::empty({static_cast<int64_t>(gate.size())}, at::TensorOptions(c10::CppTypeToScalarType<T>::value));
  T* values = activated.data_ptr<T>();
  std::transform(gate.begin(), gate.end(), values, [](float g) { return T(g); });
  at::silu_(activated);
  for (size_t i = 0; i < gate.size(); ++i) gate[i] = rounded<T>(static_cast<float>(values[i]) * up[i]);
}

// `sum` = a + b for each element, rounded to T (a residual add).
template <typename T>
void addInto(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>& sum) {
  sum.resize(a.size());
  for (size_t i = 0; i < a.size(); ++i) sum[i] = rounded<T>(a[i] + b[i]);
}

template <typename T>
at::Tensor decodeLayer(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin,
                       const std::optional<at::Tensor>& mask, const LlamaLayerWeights& w, const LlamaLayerShape& shape,
                       LayerKeyValues& cache) {
  thread_local StepRows r;
  const int64_t B = x.size(0), H = x.size(2), D = shape.headDim;
  const T* input = x.data_ptr<T>();
  r.x.assign(input, input + B * H);
  rmsNormRows<T>(r.x, H, w.inputNorm, shape.eps, r.normed);
  linearRows<T>(w.q, r.normed, B, r.q);
  linearRows<T>(w.k, r.normed, B, r.k);
  linearRows<T>(w.v, r.normed, B, r.v);
  rotate<T>(r.q, B, shape.heads, D, cos, sin);
  rotate<T>(r.k, B, shape.kvHeads, D, cos, sin);
  // A mask covers every position held, so nothing is dropped under one.
  makeRoom(cache, mask ? std::nullopt : shape.window);
  append<T>(r, cache, B, shape.kvHeads, D);
  ++cache.length;
  attend<T>(r.q, cache, mask, shape, B, r.attended);
  linearRows<T>(w.o, r.attended, B, r.projected);
  addInto<T>(r.x, r.projected, r.h);
  rmsNormRows<T>(r.h, H, w.postAttentionNorm, shape.eps, r.normed);
  linearRows<T>(w.gate, r.normed, B, r.gate);
  linearRows<T>(w.up, r.normed, B, r.up);
  siluTimes<T>(r.gate, r.up);
  linearRows<T>(w.down, r.gate, B, r.projected);
  at::Tensor out = at::empty({B, 1, H}, x.options());
  T* o = out.data_ptr<T>();
  for (int64_t i = 0; i < B * H; ++i) o[i] = T(r.h[i] + r.projected[i]);
  return out;
}

bool linearFits(const DecodeLinear& layer, int64_t outFeatures, int64_t inFeatures, at::ScalarType dtype) {
  const at::Tensor& w = layer.weight;
  const bool int8 = w.scalar_type() == at::kChar;
  const auto floatVector = [&](const at::Tensor& t) {
    return t.scalar_type() == at::kFloat && t.dim() == 1 && t.size(0) == outFeatures && t.is_contiguous();
  };
  const auto floatMatrix = [](const at::Tensor& t, int64_t rows, int64_t columns) {
    return t.scalar_type() == at::kFloat && t.dim() == 2 && t.size(0) == rows && t.size(1) == columns &&
           t.is_contiguous() && t.device().is_cpu();
  };
  const int64_t r = layer.loraA.defined() ? layer.loraA.size(0) : 0;
  return w.dim() == 2 && w.size(0) == outFeatures && w.size(1) == inFeatures && w.is_contiguous() &&
         w.device().is_cpu() && (int8 ? floatVector(layer.scale) : w.scalar_type() == dtype) &&
         (!layer.bias.defined() || floatVector(layer.bias)) &&
         (!layer.loraA.defined() ||
          (floatMatrix(layer.loraA, r, inFeatures) && floatMatrix(layer.loraB, outFeatures, r)));
}

}  // namespace

bool llamaDecodeFits(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin,
                     const std::optional<at::Tensor>& mask, const LlamaLayerWeights& w, const LlamaLayerShape& shape) {
  const auto dtype = x.scalar_type();
  if ((dtype != at::kFloat && dtype != at::kBFloat16) || x.dim() != 3 || x.size(1) != 1 || !x.device().is_cpu())
    return false;
  const int64_t B = x.size(0), H = x.size(2), D = shape.headDim;
  const auto rotary = [&](const at::Tensor& t) {
    return t.scalar_type() == dtype && t.dim() == 3 && (t.size(0) == 1 || t.size(0) == B) && t.size(1) == 1 &&
           t.size(2) == D && t.is_contiguous() && t.device().is_cpu();
  };
  const auto norm = [&](const at::Tensor& t) {
    return t.scalar_type() == dtype && t.dim() == 1 && t.size(0) == H && t.is_contiguous();
  };
  if (!rotary(cos) || !rotary(sin) || D % 2 != 0 || !norm(w.inputNorm) || !norm(w.postAttentionNorm)) return false;
  if (mask && (mask->scalar_type() != at::kBool || mask->dim() != 4 || mask->size(0) != B || mask->size(1) != 1 ||
               mask->size(2) != 1 || !mask->is_contiguous()))
    return false;
  const int64_t I = w.gate.weight.dim() == 2 ? w.gate.weight.size(0) : -1;
  return shape.kvHeads > 0 && shape.heads % shape.kvHeads == 0 && linearFits(w.q, shape.heads * D, H, dtype) &&
         linearFits(w.k, shape.kvHeads * D, H, dtype) && linearFits(w.v, shape.kvHeads * D, H, dtype) &&
         linearFits(w.o, H, shape.heads * D, dtype) && linearFits(w.gate, I, H, dtype) &&
         linearFits(w.up, I, H, dtype) && linearFits(w.down, H, I, dtype);
}

at::Tensor llamaDecodeLayer(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin,
                            const std::optional<at::Tensor>& mask, const LlamaLayerWeights& weights,
                            const LlamaLayerShape& shape, LayerKeyValues& cache) {
  const at::Tensor input = x.contiguous();
  if (!cache.keys.defined()) {
    const int64_t room = roomFor(0);
    cache = {emptyKeyBlocks(x.size(0), shape.kvHeads, room, shape.headDim, x.options()),
             at::empty({x.size(0), shape.kvHeads, room, shape.headDim}, x.options()), 0};
  }
  return x.scalar_type() == at::kFloat ? decodeLayer<float>(input, cos, sin, mask, weights, shape, cache)
                                       : decodeLayer<c10::BFloat16>(input, cos, sin, mask, weights, shape, cache);
}

void adoptKeyValues(const at::Tensor& keys, const at::Tensor& values, const LlamaLayerShape& shape,
                    LayerKeyValues& cache) {
  const int64_t group = shape.heads / shape.kvHeads, length = keys.size(2), room = roomFor(length);
  at::Tensor held = at::empty({values.size(0), shape.kvHeads, room, shape.headDim}, values.options());
  held.narrow(2, 0, length).copy_(values.slice(1, 0, shape.heads, group));
  cache = {keyBlocksOf(keys.slice(1, 0, shape.heads, group), room), held, length};
}

}  // namespace firebrand

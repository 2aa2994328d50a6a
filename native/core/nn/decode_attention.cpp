#include "core/nn/decode_attention.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/nn/simd_exp.h"
#include "core/nn/simd_rows.h"

namespace firebrand {
namespace {

// One head: T keys and values a row stride apart, D wide, in float32 or bfloat16.
template <typename T>
struct HeadRows {
  const T* keys;
  const T* values;
  int64_t keyStride;
  int64_t valueStride;
};

template <typename T>
void attendHead(const float* query, const HeadRows<T>& head, int64_t length, int64_t D, float scale,
                std::vector<float>& weights, float* out) {
  weights.resize(length);
  float largest = -INFINITY;
  for (int64_t t = 0; t < length; ++t) {
    weights[t] = dotRow(head.keys + t * head.keyStride, D, query) * scale;
    largest = std::max(largest, weights[t]);
  }
  const float normalizer = 1.0f / expShifted(weights.data(), length, largest);
  for (int64_t t = 0; t < length; ++t) weights[t] *= normalizer;
  weightedRows(weights.data(), head.values, head.valueStride, length, D, out);
}

// Every head of query [heads, D] (float32) over keys and values [heads, length, D] of type T: [heads, D] float32.
template <typename T>
at::Tensor attendHeads(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double scale) {
  const int64_t heads = q.size(0), length = k.size(1), D = q.size(1);
  at::Tensor out = at::empty_like(q);
  const float* qp = q.data_ptr<float>();
  const T *kp = k.data_ptr<T>(), *vp = v.data_ptr<T>();
  float* op = out.data_ptr<float>();
  at::parallel_for(0, heads, 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> weights;  // kept: a token runs this for every layer
    for (int64_t h = begin; h < end; ++h) {
      const HeadRows<T> head{kp + h * k.stride(0), vp + h * v.stride(0), k.stride(1), v.stride(1)};
      attendHead(qp + h * D, head, length, D, static_cast<float>(scale), weights, op + h * D);
    }
  });
  return out;
}

}  // namespace

bool decodeAttentionFits(const at::Tensor& query, const at::Tensor& keys, const at::Tensor& values) {
  const auto plain = [](const at::Tensor& t) {
    return (t.scalar_type() == at::kFloat || t.scalar_type() == at::kBFloat16) && t.device().is_cpu() &&
           t.layout() == at::kStrided && t.dim() >= 2 && t.stride(-1) == 1 &&
           !(at::GradMode::is_enabled() && t.requires_grad());
  };
  if (!plain(query) || !plain(keys) || !plain(values) || query.size(-2) != 1) return false;
  if (keys.scalar_type() != query.scalar_type() || values.scalar_type() != query.scalar_type()) return false;
  const auto leading = query.sizes().slice(0, query.dim() - 2);
  return keys.dim() == query.dim() && values.dim() == query.dim() &&
         keys.sizes().slice(0, keys.dim() - 2).equals(leading) &&
         values.sizes().slice(0, values.dim() - 2).equals(leading) && keys.size(-1) == query.size(-1) &&
         values.size(-2) == keys.size(-2) && values.size(-1) == query.size(-1) && keys.size(-2) > 0;
}

at::Tensor decodeAttention(const at::Tensor& query, const at::Tensor& keys, const at::Tensor& values, double scale) {
  const int64_t D = query.size(-1), length = keys.size(-2);
  // Heads (all leading dims) flattened: views where the leading strides allow, else copies. The
  // query is widened (D values a head); keys and values are read in their own dtype.
  const at::Tensor q = query.reshape({-1, D}).to(at::kFloat).contiguous();
  const at::Tensor k = keys.reshape({-1, length, D});
  const at::Tensor v = values.reshape({-1, length, D});
  const at::Tensor out = keys.scalar_type() == at::kFloat ? attendHeads<float>(q, k, v, scale)
                                                          : attendHeads<c10::BFloat16>(q, k, v, scale);
  return out.to(query.scalar_type()).view(query.sizes());
}

}  // namespace firebrand

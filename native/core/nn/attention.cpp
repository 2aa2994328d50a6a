#include "core/nn/attention.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/compat/torch_compat.h"
#include "core/nn/decode_attention.h"
#include "core/nn/inference_attention.h"
#include "core/runtime/inference_run.h"

namespace firebrand {
namespace {

bool needsGradient(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                   const c10::optional<at::Tensor>& mask) {
  return at::GradMode::is_enabled() &&
         (query.requires_grad() || key.requires_grad() || value.requires_grad() || (mask && mask->requires_grad()));
}

// The scores' factor: the one given, else PyTorch's 1 / sqrt(head size).
double scaleOf(const at::Tensor& query, std::optional<double> scale) {
  return scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));
}

}  // namespace

at::Tensor scaledDotProductAttention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                     const c10::optional<at::Tensor>& mask, double dropoutP, bool isCausal,
                                     std::optional<double> scale, bool training) {
  // Half precision accumulates in float32 and rounds once, as PyTorch's CPU kernel (flash attention) does.
  if (query.scalar_type() == at::kBFloat16 || query.scalar_type() == at::kHalf) {
    const auto wide = [](const at::Tensor& t) { return t.is_floating_point() ? t.to(at::kFloat) : t; };
    const c10::optional<at::Tensor> wideMask = mask ? c10::optional<at::Tensor>(wide(*mask)) : c10::nullopt;
    return scaledDotProductAttention(wide(query), wide(key), wide(value), wideMask, dropoutP, isCausal, scale, training)
        .to(query.scalar_type());
  }
  const double factor = scaleOf(query, scale);
  // A prediction or a generation step: firebrand's kernel where no mask is given, else PyTorch's fused
  // kernel, 1.2-2.8x its math at 128 positions (libtorch 2.14; taking gradients it was no faster, and
  // training keeps the autograd path).
  if (inInferenceRun() && !needsGradient(query, key, value, mask) && (dropoutP == 0 || !training) &&
      !(mask && isCausal)) {
    if (!mask && inferenceAttentionFits(query, key, value))
      return inferenceAttention(query, key, value, isCausal ? std::optional<int64_t>(0) : std::nullopt, factor);
    if (auto fused = compat::fusedAttention(query, key, value, mask, isCausal, scale)) return *fused;
  }
  at::Tensor weights = at::matmul(query, key.transpose(-2, -1)) * factor;
  const double blocked = -std::numeric_limits<double>::infinity();
  if (isCausal) {
    // PyTorch aligns the triangle at the top left: query i sees keys 0..i whatever the key count.
    const auto sizes = at::TensorOptions().dtype(at::kBool).device(query.device());
    weights = weights.masked_fill(at::ones({query.size(-2), key.size(-2)}, sizes).tril().logical_not(), blocked);
  }
  if (mask)
    weights = mask->scalar_type() == at::kBool ? weights.masked_fill(mask->logical_not(), blocked) : weights + *mask;
  weights = at::softmax(weights, -1);
  if (dropoutP > 0) weights = at::dropout(weights, dropoutP, training);
  return at::matmul(weights, value);
}

std::pair<at::Tensor, at::Tensor> extendKeysValues(std::vector<at::Tensor>& entry, const at::Tensor& key,
                                                   const at::Tensor& value) {
  // entry: the keys and values held (views), then the buffers they are in, with room for more
  // positions, so that a step copies its own keys only (at::cat copied the whole cache at every
  // step). A buffer full, or a cache narrowed to a window, moves into one twice the size.
  const int64_t held = entry.empty() ? 0 : entry[0].size(-2), total = held + key.size(-2);
  if (entry.size() < 4 || entry[2].size(-2) < total ||
      !entry[2].sizes().slice(0, key.dim() - 2).equals(key.sizes().slice(0, key.dim() - 2))) {
    const auto grown = [&](const at::Tensor& fresh, int at) {
      std::vector<int64_t> sizes = fresh.sizes().vec();
      sizes[sizes.size() - 2] = std::max<int64_t>(2 * total, 64);
      at::Tensor buffer = at::empty(sizes, fresh.options());
      if (held > 0) buffer.narrow(-2, 0, held).copy_(entry[at]);
      return buffer;
    };
    entry = {at::Tensor(), at::Tensor(), grown(key, 0), grown(value, 1)};
  }
  entry[2].narrow(-2, held, key.size(-2)).copy_(key);
  entry[3].narrow(-2, held, value.size(-2)).copy_(value);
  entry[0] = entry[2].narrow(-2, 0, total);
  entry[1] = entry[3].narrow(-2, 0, total);
  return {entry[0], entry[1]};
}

at::Tensor causalKeep(int64_t queries, int64_t keys, const at::TensorOptions& options) {
  return at::ones({queries, keys}, options.dtype(at::kBool)).tril(keys - queries);
}

at::Tensor windowKeep(int64_t queries, int64_t keys, int64_t window, const at::TensorOptions& options) {
  const at::Tensor all = at::ones({queries, keys}, options.dtype(at::kBool));
  return all.tril(keys - queries).logical_and(all.triu(keys - queries - window + 1));
}

at::Tensor cachedCausalAttention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                 const c10::optional<at::Tensor>& mask, std::optional<double> scale,
                                 std::vector<at::Tensor>& entry) {
  const auto [keys, values] = extendKeysValues(entry, key, value);
  if (mask) return scaledDotProductAttention(query, keys, values, mask, 0.0, false, scale, false);
  if (decodeAttentionFits(query, keys, values)) return decodeAttention(query, keys, values, scaleOf(query, scale));
  const int64_t queries = query.size(-2);
  if (inferenceAttentionFits(query, keys, values))
    return inferenceAttention(query, keys, values, keys.size(-2) - queries, scaleOf(query, scale));
  // One new query sees every key: no mask to build.
  const c10::optional<at::Tensor> keep =
      queries == 1 ? c10::nullopt : c10::optional<at::Tensor>(causalKeep(queries, keys.size(-2), query.options()));
  return scaledDotProductAttention(query, keys, values, keep, 0.0, false, scale, false);
}

at::Tensor cachedWindowAttention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                 int64_t window, std::optional<double> scale, std::vector<at::Tensor>& entry) {
  const auto [keys, values] = extendKeysValues(entry, key, value);
  const at::Tensor output =
      scaledDotProductAttention(query, keys, values, windowKeep(query.size(-2), keys.size(-2), window, query.options()),
                                0.0, false, scale, false);
  const int64_t kept = std::min(window - 1, keys.size(-2));
  entry = {keys.narrow(-2, keys.size(-2) - kept, kept), values.narrow(-2, values.size(-2) - kept, kept)};
  return output;
}

}  // namespace firebrand

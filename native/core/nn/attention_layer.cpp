#include "core/nn/attention_layer.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/activation.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "core/errors.h"
#include "core/nn/attention.h"
#include "core/nn/attention_onnx.h"
#include "core/nn/attention_script.h"
#include "core/nn/layer_row.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

// A boolean mask (true: left out) as the additive mask PyTorch turns it into.
at::Tensor additive(const at::Tensor& mask, const at::TensorOptions& like) {
  if (mask.scalar_type() != at::kBool) return mask;
  return at::zeros(mask.sizes(), like).masked_fill(mask, -std::numeric_limits<double>::infinity());
}

std::vector<at::Tensor> attend(torch::nn::MultiheadAttentionImpl& mha, bool batchFirst, at::Tensor query,
                               at::Tensor key, at::Tensor value, const AttentionCall& call, bool training) {
  const bool batched = query.dim() == 3;
  if (batched && batchFirst) {
    query = query.transpose(0, 1);
    key = key.transpose(0, 1);
    value = value.transpose(0, 1);
  }
  c10::optional<at::Tensor> keyPadding = call.keyPaddingMask;
  if (!batched) {
    query = query.unsqueeze(1);
    key = key.unsqueeze(1);
    value = value.unsqueeze(1);
    if (keyPadding) keyPadding = keyPadding->unsqueeze(0);
  }
  const int64_t heads = mha.options.num_heads();
  const int64_t targets = query.size(0), batch = query.size(1), embed = query.size(2);
  int64_t sources = key.size(0);
  const int64_t headDim = embed / heads;
  // The packed in-projection, one third each for queries, keys and values.
  const auto weights = mha.in_proj_weight.chunk(3);
  const auto biases = mha.in_proj_bias.defined() ? mha.in_proj_bias.chunk(3) : std::vector<at::Tensor>(3);
  const auto project = [&](const at::Tensor& x, int i, int64_t length) {
    return at::linear(x, weights[i], biases[i]).reshape({length, batch * heads, headDim}).transpose(0, 1);
  };
  const at::Tensor q = project(query, 0, targets);
  at::Tensor k = project(key, 1, sources), v = project(value, 2, sources);
  if (call.cache) {
    std::tie(k, v) = extendKeysValues(*call.cache, k, v);
    sources = k.size(1);
  }

  const auto floats = q.options();
  c10::optional<at::Tensor> mask;
  const auto add = [&](const at::Tensor& term) { mask = mask ? *mask + term : term; };
  if (call.isCausal) {
    // With a cache the queries are the newest positions; without, PyTorch's top-left triangle.
    const auto keep = call.cache ? causalKeep(targets, sources, floats)
                                 : at::ones({targets, sources}, floats.dtype(at::kBool)).tril();
    add(at::zeros({targets, sources}, floats)
            .masked_fill(keep.logical_not(), -std::numeric_limits<double>::infinity()));
  }
  if (call.attnMask)
    add(call.attnMask->dim() == 2 ? additive(*call.attnMask, floats).unsqueeze(0) : additive(*call.attnMask, floats));
  if (keyPadding) {
    add(additive(*keyPadding, floats)
            .view({batch, 1, 1, sources})
            .expand({batch, heads, 1, sources})
            .reshape({batch * heads, 1, sources}));
  }
  const at::Tensor scores = at::bmm(q * std::sqrt(1.0 / static_cast<double>(headDim)), k.transpose(-2, -1));
  at::Tensor attention = at::softmax(mask ? scores + *mask : scores, -1);
  const double dropout = mha.options.dropout();
  if (dropout > 0 && training) attention = at::dropout(attention, dropout, true);
  at::Tensor output = at::bmm(attention, v).transpose(0, 1).contiguous().view({targets * batch, embed});
  output = at::linear(output, mha.out_proj->weight, mha.out_proj->bias).view({targets, batch, embed});
  if (!batched)
    output = output.squeeze(1);
  else if (batchFirst)
    output = output.transpose(0, 1);
  if (!call.needWeights) return {output};
  at::Tensor perHead = attention.view({batch, heads, targets, sources});
  at::Tensor shown = call.averageAttnWeights ? perHead.mean(1) : perHead;
  if (!batched) shown = shown.squeeze(0);
  return {output, shown};
}

}  // namespace

BuiltLayer buildMultiheadAttention(ResolvedOptions& options) {
  const int64_t embed = options.integer("embedDim");
  const auto module =
      torch::nn::MultiheadAttention(torch::nn::MultiheadAttentionOptions(embed, options.integer("numHeads"))
                                        .dropout(options.number("dropout"))
                                        .bias(options.flag("bias")));
  const std::string layout = options.flag("batchFirst") ? "[N, L, " : "[L, N, ";
  return {torch::nn::AnyModule(module), layout + std::to_string(embed) + "] or [L, " + std::to_string(embed) +
                                            "] (embedDim=" + std::to_string(embed) + ")"};
}

std::vector<at::Tensor> runMultiheadAttention(BuiltLayer& layer, bool batchFirst, const at::Tensor& query,
                                              const at::Tensor& key, const at::Tensor& value, const AttentionCall& call,
                                              bool training, const std::string& owner) {
  auto& mha = dynamic_cast<torch::nn::MultiheadAttentionImpl&>(*layer.module.ptr());
  try {
    return attend(mha, batchFirst, query, key, value, call, training);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& error) {
    std::string masks;
    if (call.keyPaddingMask) masks += ", keyPaddingMask " + shapeAndDtypeText(*call.keyPaddingMask);
    if (call.attnMask) masks += ", attnMask " + shapeAndDtypeText(*call.attnMask);
    throw ShapeMismatch(owner + " cannot take query " + shapeAndDtypeText(query) + ", key " + shapeAndDtypeText(key) +
                        ", value " + shapeAndDtypeText(value) + masks + "; it expects " + layer.expectedInput +
                        ". libtorch: " + torchReason(error));
  }
}

LayerRows attentionLayers() {
  return {{"multiheadAttention", buildMultiheadAttention, multiheadAttentionScript, multiheadAttentionOnnx}};
}

}  // namespace firebrand

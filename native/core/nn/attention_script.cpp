#include "core/nn/attention_script.h"

#include <cmath>

#include "core/options/resolved_options.h"

namespace firebrand {

// Bool tensors are dtype 11 (no torch.bool in TorchScript compiled without Python).
namespace {

const char* const kMultiheadAttentionMethod = R"(
def _multihead_attention(self, query: Tensor, key: Tensor, value: Tensor, in_w: Tensor, in_b: Optional[Tensor], out_w: Tensor,
                         out_b: Optional[Tensor], heads: int, batch_first: bool, dropout: float, scale: float,
                         key_padding_mask: Optional[Tensor], attn_mask: Optional[Tensor], need_weights: bool, average: bool,
                         is_causal: bool) -> List[Tensor]:
    batched = query.dim() == 3
    if batched and batch_first:
        query = query.transpose(0, 1)
        key = key.transpose(0, 1)
        value = value.transpose(0, 1)
    if not batched:
        query = query.unsqueeze(1)
        key = key.unsqueeze(1)
        value = value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    targets = query.size(0)
    batch = query.size(1)
    embed = query.size(2)
    sources = key.size(0)
    head_dim = embed // heads
    w = in_w.chunk(3)
    bq: Optional[Tensor] = None
    bk: Optional[Tensor] = None
    bv: Optional[Tensor] = None
    if in_b is not None:
        b = in_b.chunk(3)
        bq = b[0]
        bk = b[1]
        bv = b[2]
    q = torch.linear(query, w[0], bq).reshape([targets, batch * heads, head_dim]).transpose(0, 1)
    k = torch.linear(key, w[1], bk).reshape([sources, batch * heads, head_dim]).transpose(0, 1)
    v = torch.linear(value, w[2], bv).reshape([sources, batch * heads, head_dim]).transpose(0, 1)
    mask: Optional[Tensor] = None
    if is_causal:
        keep = torch.ones([targets, sources], dtype=11, device=q.device).tril()
        mask = torch.zeros([targets, sources], dtype=q.dtype, device=q.device).masked_fill(keep.logical_not(), float('-inf'))
    if attn_mask is not None:
        am = attn_mask
        if am.dtype == 11:
            am = torch.zeros(am.size(), dtype=q.dtype, device=q.device).masked_fill(am, float('-inf'))
        if am.dim() == 2:
            am = am.unsqueeze(0)
        mask = am if mask is None else mask + am
    if key_padding_mask is not None:
        kp = key_padding_mask
        if kp.dtype == 11:
            kp = torch.zeros(kp.size(), dtype=q.dtype, device=q.device).masked_fill(kp, float('-inf'))
        kp = kp.view([batch, 1, 1, sources]).expand([batch, heads, 1, sources]).reshape([batch * heads, 1, sources])
        mask = kp if mask is None else mask + kp
    scores = torch.bmm(q * scale, k.transpose(-2, -1))
    if mask is not None:
        scores = scores + mask
    attention = torch.softmax(scores, -1)
    if dropout > 0.0 and self.training:
        attention = torch.dropout(attention, dropout, True)
    output = torch.bmm(attention, v).transpose(0, 1).contiguous().view([targets * batch, embed])
    output = torch.linear(output, out_w, out_b).view([targets, batch, embed])
    if not batched:
        output = output.squeeze(1)
    elif batch_first:
        output = output.transpose(0, 1)
    if not need_weights:
        return [output]
    shown = attention.view([batch, heads, targets, sources])
    if average:
        shown = shown.mean(1)
    if not batched:
        shown = shown.squeeze(0)
    return [output, shown]
)";

}  // namespace

ScriptCall multiheadAttentionScript(ResolvedOptions& o, const LayerScriptContext& c) {
  const int64_t heads = o.integer("numHeads");
  // The scale as C++ computes it, so both round alike.
  const double scale = std::sqrt(1.0 / static_cast<double>(o.integer("embedDim") / heads));
  const auto& a = c.operands;
  return {"self._multihead_attention(" + a.at(0) + ", " + a.at(1) + ", " + a.at(2) + ", " + c.tensor("in_proj_weight") +
              ", " + c.tensor("in_proj_bias") + ", " + c.tensor("out_proj.weight") + ", " + c.tensor("out_proj.bias") +
              ", " + std::to_string(heads) + ", " + scriptBool(o.flag("batchFirst")) + ", " +
              scriptNumber(o.number("dropout")) + ", " + scriptNumber(scale) + ", " + a.at(3) + ", " + a.at(4) + ", " +
              a.at(5) + ", " + a.at(6) + ", " + a.at(7) + ")",
          kMultiheadAttentionMethod};
}

}  // namespace firebrand

#include "core/nn/attention_onnx.h"

#include <ATen/Functions.h>

#include <cmath>

#include "core/errors.h"
#include "core/onnx/onnx_layers.h"

namespace firebrand {

OnnxValue multiheadAttentionOnnx(ResolvedOptions& o, const OnnxLayerCall& c) {
  OnnxBuilder& b = c.b;
  const at::Tensor& query = c.examples.at(0).toTensor();
  if (query.dim() != 3) throw NotExportable("an unbatched query ([L, E]) is not exported; give [N, L, E]");
  const at::ScalarType type = query.scalar_type();
  const bool batchFirst = o.flag("batchFirst");
  const int64_t embed = o.integer("embedDim"), heads = o.integer("numHeads"), headDim = embed / heads;
  const std::vector<int64_t> swap01{1, 0, 2};
  const auto batchMajor = [&](const std::string& x) {
    return batchFirst ? x : b.op("Transpose", {x}, {{"perm", swap01}});
  };
  // The packed in-projection's thirds as constants: queries, keys, values.
  const auto weights = c.value("in_proj_weight").detach().chunk(3);
  const auto biases = o.flag("bias") ? c.value("in_proj_bias").detach().chunk(3) : std::vector<at::Tensor>(3);
  // x [N, T, E] -> [N, heads, T, headDim].
  const auto project = [&](size_t operand, int i) {
    const std::string projected = onnxLinear(b, batchMajor(c.operands.at(operand)), 3, b.constant(weights[i]),
                                             biases[i].defined() ? b.constant(biases[i]) : "");
    const std::string split = b.op("Reshape", {projected, b.ints({0, 0, heads, headDim})});
    return b.op("Transpose", {split}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  };
  const std::string q = project(0, 0), k = project(1, 1), v = project(2, 2);

  std::string keep, additive;
  const auto addKeep = [&](const std::string& mask) { keep = keep.empty() ? mask : b.op("And", {keep, mask}); };
  const auto addAdditive = [&](const std::string& mask) {
    additive = additive.empty() ? mask : b.op("Add", {additive, mask});
  };
  // A mask operand: bool (true: left out) or added as floats; `shaped` places it against [N, heads, L, S].
  const auto mask = [&](size_t operand, const std::function<std::string(const std::string&)>& shaped) {
    if (c.operands.at(operand).empty()) return;
    const at::Tensor& example = c.examples.at(operand).toTensor();
    const std::string placed = shaped(c.operands.at(operand));
    if (example.scalar_type() == at::kBool)
      addKeep(b.op("Not", {placed}));
    else
      addAdditive(example.scalar_type() == type ? placed : b.cast(placed, type));
  };
  if (c.examples.at(7).toBool()) addKeep(onnxCausalKeep(b, q, k, /*alignEnd=*/false, std::nullopt));
  mask(4, [&](const std::string& m) {
    if (c.examples.at(4).toTensor().dim() == 2) return m;
    return b.op("Reshape", {m, b.ints({-1, heads, 0, 0})});
  });
  mask(3, [&](const std::string& m) { return b.unsqueeze(m, {1, 2}); });

  std::string probabilities;
  const std::string attended =
      onnxAttention(b, q, k, v, 4, 1.0 / std::sqrt(static_cast<double>(headDim)), keep, additive, type, &probabilities);
  const std::string merged = b.op(
      "Reshape", {b.op("Transpose", {attended}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}), b.ints({0, 0, embed})});
  const std::string output = onnxLinear(b, merged, 3, c.tensor("out_proj.weight"), c.tensor("out_proj.bias"));
  OnnxValue result{batchMajor(output)};
  if (c.examples.at(5).toBool())
    result.push_back(c.examples.at(6).toBool() ? b.reduce("ReduceMean", probabilities, {1}, false) : probabilities);
  return result;
}

}  // namespace firebrand

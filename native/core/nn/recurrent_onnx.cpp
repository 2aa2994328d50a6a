#include "core/nn/recurrent_onnx.h"

#include <ATen/Functions.h>

#include "core/errors.h"

namespace firebrand {
namespace {

// PyTorch's gate order within a weight's rows, as ONNX orders them: LSTM (i, f, g, o) -> (i, o, f, c),
// GRU (r, z, n) -> (z, r, h).
std::vector<int64_t> gateOrder(const std::string& type) {
  if (type == "lstm") return {0, 3, 1, 2};
  if (type == "gru") return {1, 0, 2};
  return {0};
}

at::Tensor reordered(const at::Tensor& weight, const std::vector<int64_t>& order) {
  const auto gates = weight.detach().chunk(static_cast<int64_t>(order.size()), 0);
  std::vector<at::Tensor> parts;
  for (const int64_t gate : order) parts.push_back(gates[gate]);
  return at::cat(parts, 0);
}

}  // namespace

OnnxValue recurrentOnnx(const std::string& type, ResolvedOptions& o, const OnnxLayerCall& c) {
  OnnxBuilder& b = c.b;
  if (type == "lstm" && o.integer("projSize") > 0)
    throw NotExportable("an LSTM with projSize has no ONNX form (ONNX's LSTM has no projection)");
  const at::Tensor& example = c.examples.at(0).toTensor();
  if (example.dim() != 3) throw NotExportable("an unbatched recurrent input ([L, F]) is not exported; give [N, L, F]");
  const int64_t layers = o.integer("numLayers"), hidden = o.integer("hiddenSize");
  const bool batchFirst = o.flag("batchFirst"), bidirectional = o.flag("bidirectional"), bias = o.flag("bias");
  const int64_t directions = bidirectional ? 2 : 1;
  const std::vector<int64_t> order = gateOrder(type);
  const std::string opType = type == "lstm" ? "LSTM" : type == "gru" ? "GRU" : "RNN";
  const std::vector<int64_t> swap01{1, 0, 2};

  // Time-major, as ONNX's default layout and PyTorch's states are.
  std::string x = batchFirst ? b.op("Transpose", {c.operands.at(0)}, {{"perm", swap01}}) : c.operands.at(0);
  const std::string h0 = c.operands.at(1), c0 = c.operands.at(2);
  const std::string lengths = c.operands.at(3).empty() ? "" : b.cast(c.operands.at(3), at::kInt);
  std::vector<std::string> lastHidden, lastCell;
  for (int64_t layer = 0; layer < layers; ++layer) {
    std::vector<at::Tensor> w, r, biases;
    for (int64_t direction = 0; direction < directions; ++direction) {
      const std::string suffix = "_l" + std::to_string(layer) + (direction ? "_reverse" : "");
      const auto state = [&](const std::string& name) { return c.value(name + suffix); };
      w.push_back(reordered(state("weight_ih"), order));
      r.push_back(reordered(state("weight_hh"), order));
      if (bias) biases.push_back(at::cat({reordered(state("bias_ih"), order), reordered(state("bias_hh"), order)}));
    }
    const auto states = [&](const std::string& given) -> std::string {
      if (given.empty()) return "";
      return b.op("Slice", {given, b.ints({layer * directions}), b.ints({(layer + 1) * directions}), b.ints({0})});
    };
    std::vector<std::string> inputs{x,
                                    b.constant(at::stack(w)),
                                    b.constant(at::stack(r)),
                                    bias ? b.constant(at::stack(biases)) : "",
                                    lengths,
                                    states(h0)};
    if (type == "lstm") inputs.push_back(states(c0));
    std::vector<OnnxAttribute> attributes{{"hidden_size", hidden},
                                          {"direction", std::string(bidirectional ? "bidirectional" : "forward")}};
    if (type == "gru") attributes.push_back({"linear_before_reset", int64_t{1}});
    if (type == "rnn") {
      const std::string activation = o.text("nonlinearity") == "relu" ? "Relu" : "Tanh";
      attributes.push_back({"activations", std::vector<std::string>(directions, activation)});
    }
    const auto outputs = b.add(opType, inputs, std::move(attributes), type == "lstm" ? 3 : 2);
    // Y [T, D, N, H] -> [T, N, D * H], the next layer's input.
    x = b.op("Reshape",
             {b.op("Transpose", {outputs[0]}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}), b.ints({0, 0, -1})});
    lastHidden.push_back(outputs[1]);
    if (type == "lstm") lastCell.push_back(outputs[2]);
  }
  const auto joined = [&](const std::vector<std::string>& parts) {
    return parts.size() == 1 ? parts[0] : b.op("Concat", parts, {{"axis", int64_t{0}}});
  };
  OnnxValue result{batchFirst ? b.op("Transpose", {x}, {{"perm", swap01}}) : x, joined(lastHidden)};
  if (type == "lstm") result.push_back(joined(lastCell));
  return result;
}

}  // namespace firebrand

#include "core/nn/recurrent_script.h"

namespace firebrand {

namespace {

// _packed_recurrent(mode, x, hx, params, lengths, has_biases, num_layers, dropout, bidirectional,
// batch_first) -> [output, h_n(, c_n)].
// dtype 4 is int64 (no torch.long in TorchScript compiled without Python).
const char* const kPackedRecurrentMethod = R"(
def _packed_recurrent(self, mode: str, x: Tensor, hx: List[Tensor], params: List[Tensor], lengths: Tensor, has_biases: bool,
                      num_layers: int, dropout: float, bidirectional: bool, batch_first: bool) -> List[Tensor]:
    batch_dim = 0 if batch_first else 1
    steps = x.size(1 if batch_first else 0)
    sorted_lengths, order = torch.sort(lengths.to(torch.device('cpu'), 4), 0, True)
    restore = torch.empty_like(order).scatter_(0, order, torch.arange(0, order.numel(), dtype=4))
    order = order.to(x.device)
    restore = restore.to(x.device)
    packed = torch._pack_padded_sequence(x.index_select(batch_dim, order), sorted_lengths, batch_first)
    data = packed[0]
    batch_sizes = packed[1]
    states: List[Tensor] = [state.index_select(1, order) for state in hx]
    out = data
    finals: List[Tensor] = []
    if mode == 'lstm':
        lstm = torch.lstm(data, batch_sizes, states, params, has_biases, num_layers, dropout, self.training, bidirectional)
        out = lstm[0]
        finals = [lstm[1], lstm[2]]
    elif mode == 'gru':
        gru = torch.gru(data, batch_sizes, states[0], params, has_biases, num_layers, dropout, self.training, bidirectional)
        out = gru[0]
        finals = [gru[1]]
    elif mode == 'rnn_relu':
        relu = torch.rnn_relu(data, batch_sizes, states[0], params, has_biases, num_layers, dropout, self.training, bidirectional)
        out = relu[0]
        finals = [relu[1]]
    else:
        tanh = torch.rnn_tanh(data, batch_sizes, states[0], params, has_biases, num_layers, dropout, self.training, bidirectional)
        out = tanh[0]
        finals = [tanh[1]]
    padded = torch._pad_packed_sequence(out, batch_sizes, batch_first, 0.0, steps)[0]
    result: List[Tensor] = [padded.index_select(batch_dim, restore)]
    for final in finals:
        result.append(final.index_select(1, restore))
    return result
)";

}  // namespace

ScriptCall recurrentScript(const std::string& type, ResolvedOptions& o, const LayerScriptContext& c) {
  const std::string& x = c.operands.at(0);
  const std::string& h0 = c.operands.at(1);
  const std::string& c0 = c.operands.at(2);
  const std::string& lengths = c.operands.at(3);
  std::string weights;
  for (const auto& name : c.parameters) weights += (weights.empty() ? "" : ", ") + c.tensor(name);
  const bool batchFirst = o.flag("batchFirst");
  const bool bidirectional = o.flag("bidirectional");
  const int64_t layers = o.integer("numLayers");
  const int64_t states = layers * (bidirectional ? 2 : 1);
  // PyTorch's zero initial state: [layers * directions, batch, size] (an unbatched input has no batch dimension).
  const auto zeros = [&](int64_t size) {
    const std::string sizes = "[" + std::to_string(states) + ", " + x + ".size(" + (batchFirst ? "0" : "1") + "), " +
                              std::to_string(size) + "]";
    return "torch.zeros(" + sizes + " if " + x + ".dim() == 3 else [" + std::to_string(states) + ", " +
           std::to_string(size) + "], dtype=" + x + ".dtype, device=" + x + ".device)";
  };
  const int64_t hidden = o.integer("hiddenSize");
  const int64_t projected = type == "lstm" ? o.integer("projSize") : 0;  // only an LSTM projects h
  const std::string firstState = h0 == "None" ? zeros(projected > 0 ? projected : hidden) : h0;
  const std::string state =
      type == "lstm" ? "[" + firstState + ", " + (c0 == "None" ? zeros(hidden) : c0) + "]" : firstState;
  const std::string function = type == "lstm"                     ? "lstm"
                               : type == "gru"                    ? "gru"
                               : o.text("nonlinearity") == "relu" ? "rnn_relu"
                                                                  : "rnn_tanh";
  const std::string flags =
      scriptBool(o.flag("bias")) + ", " + std::to_string(layers) + ", " + scriptNumber(o.number("dropout"));
  if (lengths != "None") {
    return {"self._packed_recurrent('" + function + "', " + x + ", " + (type == "lstm" ? state : "[" + state + "]") +
                ", [" + weights + "], " + lengths + ", " + flags + ", " + scriptBool(bidirectional) + ", " +
                scriptBool(batchFirst) + ")",
            kPackedRecurrentMethod};
  }
  return {"torch." + function + "(" + x + ", " + state + ", [" + weights + "], " + flags + ", self.training, " +
          scriptBool(bidirectional) + ", " + scriptBool(batchFirst) + ")"};
}

}  // namespace firebrand

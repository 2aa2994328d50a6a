#include "core/nn/recurrent_layers.h"

#include <torch/nn/modules/rnn.h>
#include <torch/nn/utils/rnn.h>

#include "core/errors.h"
#include "core/nn/layer_row.h"
#include "core/nn/recurrent_onnx.h"
#include "core/nn/recurrent_script.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

// What LSTM, GRU and RNN share: sizes, layers, directions, dropout between layers.
template <typename Options>
Options recurrentOptions(ResolvedOptions& options) {
  return Options(options.integer("inputSize"), options.integer("hiddenSize"))
      .num_layers(options.integer("numLayers"))
      .bias(options.flag("bias"))
      .batch_first(options.flag("batchFirst"))
      .dropout(options.number("dropout"))
      .bidirectional(options.flag("bidirectional"));
}

std::string expectedInput(ResolvedOptions& options) {
  const std::string features = std::to_string(options.integer("inputSize"));
  return (options.flag("batchFirst") ? "[N, L, " : "[L, N, ") + features + "] or [L, " + features +
         "] (inputSize=" + features + (options.flag("batchFirst") ? ", batchFirst" : "") + ")";
}

template <typename Module>
BuiltLayer built(Module module, std::string expected) {
  return {torch::nn::AnyModule(std::move(module)), std::move(expected)};
}

}  // namespace

BuiltLayer buildLstm(ResolvedOptions& options) {
  const std::string expected = expectedInput(options);
  auto lstmOptions = recurrentOptions<torch::nn::LSTMOptions>(options);
  lstmOptions.proj_size(options.integer("projSize"));
  return built(torch::nn::LSTM(lstmOptions), expected);
}

BuiltLayer buildGru(ResolvedOptions& options) {
  const std::string expected = expectedInput(options);
  return built(torch::nn::GRU(recurrentOptions<torch::nn::GRUOptions>(options)), expected);
}

BuiltLayer buildRnn(ResolvedOptions& options) {
  const std::string expected = expectedInput(options);
  auto rnnOptions = recurrentOptions<torch::nn::RNNOptions>(options);
  if (options.text("nonlinearity") == "relu")
    rnnOptions.nonlinearity(torch::kReLU);
  else
    rnnOptions.nonlinearity(torch::kTanh);
  return built(torch::nn::RNN(rnnOptions), expected);
}

namespace {

using torch::nn::utils::rnn::PackedSequence;

// The batch with the padding after each sequence's length left out (enforce_sorted=false).
PackedSequence packed(const at::Tensor& input, const at::Tensor& lengths, bool batchFirst, const std::string& owner) {
  if (input.dim() != 3 || lengths.dim() != 1 || lengths.size(0) != input.size(batchFirst ? 0 : 1)) {
    throw ShapeMismatch(owner + ": lengths must hold one length per sequence of the batch; got lengths " +
                        shapeAndDtypeText(lengths) + " for an input of " + shapeAndDtypeText(input));
  }
  const at::Tensor cpu = lengths.to(at::kCPU).to(at::kLong);
  const int64_t steps = input.size(batchFirst ? 1 : 0);
  const int64_t shortest = cpu.min().item<int64_t>(), longest = cpu.max().item<int64_t>();
  if (shortest < 1 || longest > steps) {
    throw InvalidArgument(owner + ": lengths must be in [1, " + std::to_string(steps) + "] (the input's steps); got " +
                          std::to_string(shortest < 1 ? shortest : longest));
  }
  return torch::nn::utils::rnn::pack_padded_sequence(input, cpu, batchFirst, /*enforce_sorted=*/false);
}

at::Tensor padded(const PackedSequence& output, bool batchFirst, int64_t steps) {
  return std::get<0>(torch::nn::utils::rnn::pad_packed_sequence(output, batchFirst, 0.0, steps));
}

template <typename Module>
std::vector<at::Tensor> runOneState(Module& module, const at::Tensor& input, const at::Tensor& hidden,
                                    const c10::optional<at::Tensor>& lengths, const std::string& owner) {
  if (!lengths) {
    const auto [output, last] = module.forward(input, hidden);
    return {output, last};
  }
  const bool batchFirst = module.options.batch_first();
  const auto [output, last] = module.forward_with_packed_input(packed(input, *lengths, batchFirst, owner), hidden);
  return {padded(output, batchFirst, input.size(batchFirst ? 1 : 0)), last};
}

}  // namespace

std::vector<at::Tensor> runRecurrent(BuiltLayer& layer, const at::Tensor& input, const c10::optional<at::Tensor>& h0,
                                     const c10::optional<at::Tensor>& c0, const c10::optional<at::Tensor>& lengths,
                                     const std::string& owner) {
  torch::nn::Module& module = *layer.module.ptr();
  try {
    if (auto* lstm = dynamic_cast<torch::nn::LSTMImpl*>(&module)) {
      if (h0.has_value() != c0.has_value())
        throw InvalidArgument(owner + ": give the initial state as both (h0, c0), or neither");
      torch::optional<std::tuple<at::Tensor, at::Tensor>> state;
      if (h0) state = std::make_tuple(*h0, *c0);
      if (!lengths) {
        const auto [output, last] = lstm->forward(input, state);
        return {output, std::get<0>(last), std::get<1>(last)};
      }
      const bool batchFirst = lstm->options.batch_first();
      const auto [output, last] = lstm->forward_with_packed_input(packed(input, *lengths, batchFirst, owner), state);
      return {padded(output, batchFirst, input.size(batchFirst ? 1 : 0)), std::get<0>(last), std::get<1>(last)};
    }
    if (c0) throw InvalidArgument(owner + ": only an LSTM takes a cell state c0");
    const at::Tensor hidden = h0 ? *h0 : at::Tensor();
    if (auto* gru = dynamic_cast<torch::nn::GRUImpl*>(&module)) return runOneState(*gru, input, hidden, lengths, owner);
    if (auto* rnn = dynamic_cast<torch::nn::RNNImpl*>(&module)) return runOneState(*rnn, input, hidden, lengths, owner);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& error) {
    throw ShapeMismatch(owner + " cannot take an input of shape " + shapeAndDtypeText(input) +
                        (h0 ? " with initial state " + shapeAndDtypeText(*h0) : std::string()) + "; it expects " +
                        layer.expectedInput + ". libtorch: " + torchReason(error));
  }
  throw InvalidState("firebrand bug: " + owner + " is not a recurrent layer");
}

LayerRows recurrentLayers() {
  const auto script = [](const std::string& type) {
    return [type](ResolvedOptions& o, const LayerScriptContext& c) { return recurrentScript(type, o, c); };
  };
  const auto onnx = [](const std::string& type) {
    return [type](ResolvedOptions& o, const OnnxLayerCall& c) { return recurrentOnnx(type, o, c); };
  };
  return {{"lstm", buildLstm, script("lstm"), onnx("lstm")},
          {"gru", buildGru, script("gru"), onnx("gru")},
          {"rnn", buildRnn, script("rnn"), onnx("rnn")}};
}

}  // namespace firebrand

#include "core/nn/recurrent_layers.h"

#include <torch/nn/modules/rnn.h>

#include "core/errors.h"
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
  return (options.flag("batchFirst") ? "[N, L, " : "[L, N, ") + features + "] or [L, " + features + "] (inputSize=" +
         features + (options.flag("batchFirst") ? ", batchFirst" : "") + ")";
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
  if (options.text("nonlinearity") == "relu") rnnOptions.nonlinearity(torch::kReLU);
  else rnnOptions.nonlinearity(torch::kTanh);
  return built(torch::nn::RNN(rnnOptions), expected);
}

std::vector<at::Tensor> runRecurrent(BuiltLayer& layer, const at::Tensor& input, const c10::optional<at::Tensor>& h0,
                                     const c10::optional<at::Tensor>& c0, const std::string& owner) {
  torch::nn::Module& module = *layer.module.ptr();
  try {
    if (auto* lstm = dynamic_cast<torch::nn::LSTMImpl*>(&module)) {
      if (h0.has_value() != c0.has_value()) throw InvalidArgument(owner + ": give the initial state as both (h0, c0), or neither");
      const auto [output, state] =
          h0 ? lstm->forward(input, std::make_tuple(*h0, *c0)) : lstm->forward(input);
      return {output, std::get<0>(state), std::get<1>(state)};
    }
    if (c0) throw InvalidArgument(owner + ": only an LSTM takes a cell state c0");
    const at::Tensor hidden = h0 ? *h0 : at::Tensor();
    if (auto* gru = dynamic_cast<torch::nn::GRUImpl*>(&module)) {
      const auto [output, last] = gru->forward(input, hidden);
      return {output, last};
    }
    if (auto* rnn = dynamic_cast<torch::nn::RNNImpl*>(&module)) {
      const auto [output, last] = rnn->forward(input, hidden);
      return {output, last};
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& error) {
    throw ShapeMismatch(owner + " cannot take an input of shape " + shapeAndDtypeText(input) +
                        (h0 ? " with initial state " + shapeAndDtypeText(*h0) : std::string()) + "; it expects " +
                        layer.expectedInput + ". libtorch: " + torchReason(error));
  }
  throw InvalidState("firebrand bug: " + owner + " is not a recurrent layer");
}

}  // namespace firebrand

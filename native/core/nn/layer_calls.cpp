#include "core/nn/layer_calls.h"

#include "core/errors.h"
#include "core/nn/attention_layer.h"
#include "core/nn/recurrent_layers.h"

namespace firebrand {
namespace {

TreeLayer* layerAt(ModuleTree& tree, const std::string& path) {
  const auto it = tree.layers.find(path);
  if (it == tree.layers.end()) throw InvalidState("firebrand bug: forward calls a layer at '" + path + "', which the model does not hold");
  return &it->second;
}

c10::optional<at::Tensor> optionalValue(const GraphFrame& frame, const std::optional<int64_t>& slot) {
  if (!slot) return c10::nullopt;
  return frame.values[*slot].toTensor();
}

}  // namespace

bool isLayerCall(const std::string& op) { return op == "layer" || op == "recurrent" || op == "multiheadAttention"; }

OpRun compileLayerCall(const NodeArgs& args, ModuleTree& tree) {
  const std::string& op = args.node().op;
  if (op == "layer") {
    args.expectCount(2);
    TreeLayer* layer = layerAt(tree, args.text(0));
    const int64_t x = args.tensor(1);
    return [layer, x](GraphFrame& f) -> c10::IValue { return runLayer(layer->built, f.values[x].toTensor(), layer->owner); };
  }
  if (op == "recurrent") {
    args.expectCount(5);
    TreeLayer* layer = layerAt(tree, args.text(0));
    const int64_t x = args.tensor(1);
    const auto h0 = args.optionalTensor(2), c0 = args.optionalTensor(3), lengths = args.optionalTensor(4);
    return [layer, x, h0, c0, lengths](GraphFrame& f) -> c10::IValue {
      return c10::List<at::Tensor>(runRecurrent(layer->built, f.values[x].toTensor(), optionalValue(f, h0), optionalValue(f, c0),
                                                optionalValue(f, lengths), layer->owner));
    };
  }
  if (op == "multiheadAttention") {
    args.expectCount(9);
    TreeLayer* layer = layerAt(tree, args.text(0));
    const int64_t q = args.tensor(1), k = args.tensor(2), v = args.tensor(3);
    const auto keyPadding = args.optionalTensor(4), attnMask = args.optionalTensor(5);
    const bool needWeights = args.flag(6), average = args.flag(7), causal = args.flag(8);
    ResolvedOptions options(layer->owner, layer->spec.options);
    const bool batchFirst = options.flag("batchFirst");
    return [=](GraphFrame& f) -> c10::IValue {
      const AttentionCall call{optionalValue(f, keyPadding), optionalValue(f, attnMask), needWeights, average, causal};
      return c10::List<at::Tensor>(runMultiheadAttention(layer->built, batchFirst, f.values[q].toTensor(), f.values[k].toTensor(),
                                                         f.values[v].toTensor(), call, f.training, layer->owner));
    };
  }
  return OpRun();
}

}  // namespace firebrand

#include "core/graph/layer_calls.h"

#include "core/errors.h"
#include "core/nn/attention_layer.h"
#include "core/nn/recurrent_layers.h"

namespace firebrand {
namespace {

TreeLayer* layerAt(ModuleTree& tree, const std::string& path) {
  const auto it = tree.layers.find(path);
  if (it == tree.layers.end())
    throw InvalidState("firebrand bug: forward calls a layer at '" + path + "', which the model does not hold");
  return &it->second;
}

c10::optional<at::Tensor> optionalValue(const GraphFrame& frame, const std::optional<int64_t>& slot) {
  if (!slot) return c10::nullopt;
  return frame.values[*slot].toTensor();
}

}  // namespace

TreeLayer* calledLayer(const GraphNode& node, size_t index, ModuleTree& tree) {
  if (node.op != "layer") return nullptr;
  const auto it = tree.layers.find(NodeArgs(node, index).text(0));
  return it == tree.layers.end() ? nullptr : &it->second;
}

bool isLayerCall(const std::string& op) { return op == "layer" || op == "recurrent" || op == "multiheadAttention"; }

OpRun compileLayerCall(const NodeArgs& args, ModuleTree& tree) {
  const std::string& op = args.node().op;
  if (op == "layer") {
    args.expectCount(2);
    TreeLayer* layer = layerAt(tree, args.text(0));
    const int64_t x = args.tensor(1);
    return [layer, x](GraphFrame& f) -> c10::IValue {
      return runLayer(layer->built, f.values[x].toTensor(), layer->owner);
    };
  }
  if (op == "recurrent") {
    args.expectCount(5);
    TreeLayer* layer = layerAt(tree, args.text(0));
    const int64_t x = args.tensor(1);
    const auto h0 = args.optionalTensor(2), c0 = args.optionalTensor(3), lengths = args.optionalTensor(4);
    const bool bidirectional = ResolvedOptions(layer->owner, layer->spec.options).flag("bidirectional");
    const size_t node = args.index();
    return [=](GraphFrame& f) -> c10::IValue {
      if (!f.cache) {
        return c10::List<at::Tensor>(runRecurrent(layer->built, f.values[x].toTensor(), optionalValue(f, h0),
                                                  optionalValue(f, c0), optionalValue(f, lengths), layer->owner));
      }
      // Incremental decoding: the new steps start from the state the earlier ones ended in.
      if (bidirectional)
        throw NotIncremental(layer->owner + " is bidirectional: its backward direction reads the later steps");
      if (lengths) throw NotIncremental(layer->owner + " takes lengths written for the whole sequence");
      std::vector<at::Tensor>& state = f.cache->entries[node];
      const auto start = [&](size_t i, const std::optional<int64_t>& given) {
        return i < state.size() ? c10::optional<at::Tensor>(state[i]) : optionalValue(f, given);
      };
      const auto outputs =
          runRecurrent(layer->built, f.values[x].toTensor(), start(0, h0), start(1, c0), c10::nullopt, layer->owner);
      state.assign(outputs.begin() + 1, outputs.end());
      return c10::List<at::Tensor>(outputs);
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
    const bool selfAttention = q == k && k == v;
    const size_t node = args.index();
    return [=](GraphFrame& f) -> c10::IValue {
      AttentionCall call{optionalValue(f, keyPadding), optionalValue(f, attnMask), needWeights, average, causal};
      if (f.cache) {
        if (!selfAttention)
          throw NotIncremental(layer->owner + " is not self-attention (its keys are not its queries)");
        if (!causal)
          throw NotIncremental(layer->owner + " is not causal (isCausal): each position sees the later ones");
        if (keyPadding || attnMask) throw NotIncremental(layer->owner + " takes a mask written for the whole sequence");
        call.cache = &f.cache->entries[node];
      }
      return c10::List<at::Tensor>(runMultiheadAttention(
          layer->built, batchFirst, f.values[q].toTensor(), f.values[k].toTensor(), f.values[v].toTensor(), call,
          f.training && layer->built.module.ptr()->is_training(), layer->owner));
    };
  }
  return OpRun();
}

}  // namespace firebrand

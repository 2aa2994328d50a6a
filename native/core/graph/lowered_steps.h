// How a layer call that runs lowered at inference (a convolution, inference_folding.h; a linear layer,
// linear_lowering.h) takes over the graph's steps: its node computes the lowered value, and the nodes whose
// values that value already holds (a BatchNorm folded in, the activation that alone reads the layer) pass it
// on. Each such step still runs as written whenever the lowered layer does not take the forward's input.
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "core/graph/fused_activation.h"
#include "core/graph/layer_calls.h"
#include "core/graph/module_tree.h"
#include "core/graph/node_args.h"
#include "core/graph/op_support.h"

namespace firebrand {

// Who reads each node's value: how many readers (the graph's outputs count), and the last of them.
struct Readers {
  std::vector<int> count;
  std::vector<size_t> last;
  Readers(const GraphSpec& graph, const std::vector<std::vector<int64_t>>& reads)
      : count(graph.nodes.size(), 0), last(graph.nodes.size(), 0) {
    for (size_t k = 0; k < reads.size(); ++k) {
      for (const int64_t slot : reads[k]) {
        ++count[slot];
        last[slot] = k;
      }
    }
    for (const int64_t output : graph.outputs) ++count[output];
  }
  // The node that alone reads `slot`, if it is an activation a layer runs inside it.
  std::optional<size_t> onlyActivation(const GraphSpec& graph, size_t slot) const {
    if (count[slot] == 1 && fusedActivationOf(graph.nodes[last[slot]], last[slot])) return last[slot];
    return std::nullopt;
  }

  // A sum `slot + residual` (add, alpha 1, of two tensors) that alone reads `slot` and whose residual no other
  // lowered layer adds at it (sumsTaken): its node and the residual's.
  struct Sum {
    size_t node;
    int64_t residual;
  };
  std::optional<Sum> takeSum(const GraphSpec& graph, size_t slot) {
    if (count[slot] != 1 || graph.nodes[last[slot]].op != "add" || sumsTaken[last[slot]]) return std::nullopt;
    const NodeArgs args(graph.nodes[last[slot]], last[slot]);
    const int64_t left = args.tensor(0);
    const Operand right = operand(args, 1);
    if (right.slot < 0 || !scalarAt(args, 2).equal(1) || left == right.slot) return std::nullopt;
    sumsTaken[last[slot]] = true;
    return Sum{last[slot], left == static_cast<int64_t>(slot) ? right.slot : left};
  }
  std::vector<bool> sumsTaken = std::vector<bool>(count.size(), false);
};

// Whether the layer call at node `layer` ran lowered in this frame, and the mark its step leaves where it does.
inline bool ranLowered(const GraphFrame& f, int64_t layer) {
  return static_cast<size_t>(layer) < f.ranLowered.size() && f.ranLowered[layer];
}
inline void markLowered(GraphFrame& f, int64_t layer) {
  if (f.ranLowered.size() != f.values.size()) f.ranLowered.assign(f.values.size(), false);
  f.ranLowered[layer] = true;
}

// A node whose value the lowered layer call at node `layer` computed: it passes `value` on where that call ran
// lowered in this frame (decided once, at the layer's step), else runs as written.
inline OpRun passing(int64_t layer, int64_t value, OpRun unlowered) {
  return [layer, value, unlowered = std::move(unlowered)](GraphFrame& f) -> c10::IValue {
    return ranLowered(f, layer) ? f.values[value] : unlowered(f);
  };
}

// The sum's node runs the lowered layer at node `layer` (where it ran lowered) on the input node `input` passed on,
// adding the sum's residual; else the sum runs as written.
template <typename Lowered>
void runAtSum(std::vector<OpRun>& steps, const std::shared_ptr<Lowered>& lowered, int64_t layer, int64_t input,
              Readers::Sum sum) {
  steps[sum.node] = [lowered, layer, input, residual = sum.residual,
                     unlowered = std::move(steps[sum.node])](GraphFrame& f) -> c10::IValue {
    return ranLowered(f, layer) ? c10::IValue(lowered->run(f.values[input].toTensor(), &f.values[residual].toTensor()))
                                : unlowered(f);
  };
}

// The layer call at node `i` computes the lowered value where `Lowered`'s runsOn(input value) says so, with its
// run(input tensor), or run(input tensor, residual or null) where `Lowered::kTakesResidual`; `folded` (a node folded
// into it, if any) and, where `Lowered::kTakesActivation`, an activation that alone reads the last of them
// (takeActivation(activation)) pass it on. Where `Lowered::kTakesResidual` and a sum alone reads the last of them, the
// layer runs at the sum instead, adding the residual as it stores (a residual computed after the layer, a downsampling
// convolution's, is there by then): its own node and those folded pass its input on to the sum, which alone reads them.
template <typename Lowered>
void runLowered(const GraphSpec& graph, Readers& readers, std::vector<OpRun>& steps,
                const std::shared_ptr<Lowered>& lowered, size_t i, std::optional<size_t> folded) {
  const int64_t x = NodeArgs(graph.nodes[i], i).tensor(1);
  const auto layer = static_cast<int64_t>(i);
  size_t last = folded.value_or(i);
  std::optional<Readers::Sum> sum;
  if constexpr (Lowered::kTakesResidual) sum = readers.takeSum(graph, last);
  steps[i] = [lowered, x, layer, deferred = sum.has_value(), unlowered = steps[i]](GraphFrame& f) -> c10::IValue {
    if (!lowered->runsOn(f.values[x])) return unlowered(f);
    markLowered(f, layer);
    if (deferred) return f.values[x];
    if constexpr (Lowered::kTakesResidual)
      return lowered->run(f.values[x].toTensor(), nullptr);
    else
      return lowered->run(f.values[x].toTensor());
  };
  if (folded) steps[*folded] = passing(layer, layer, std::move(steps[*folded]));
  if constexpr (Lowered::kTakesResidual) {
    if (sum) {
      runAtSum(steps, lowered, layer, static_cast<int64_t>(last), *sum);
      last = sum->node;
    }
  }
  if constexpr (Lowered::kTakesActivation) {
    if (const auto activation = readers.onlyActivation(graph, last)) {
      lowered->takeActivation(*fusedActivationOf(graph.nodes[*activation], *activation));
      steps[*activation] = passing(layer, static_cast<int64_t>(last), std::move(steps[*activation]));
    }
  }
}

// Runs each call of a layer whose module is a `Module` lowered, as `lower(builtLayer, module)` makes it (a
// shared_ptr to a Lowered); returns how many calls it took.
template <typename Module, typename Lower>
size_t lowerLayerCalls(const GraphSpec& graph, const std::vector<std::vector<int64_t>>& reads, ModuleTree& tree,
                       std::vector<OpRun>& steps, Lower lower) {
  Readers readers(graph, reads);
  size_t taken = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    TreeLayer* layer = calledLayer(graph.nodes[i], i, tree);
    auto* module = layer ? dynamic_cast<Module*>(layer->built.module.ptr().get()) : nullptr;
    if (!module) continue;
    runLowered(graph, readers, steps, lower(layer->built, *module), i, {});
    ++taken;
  }
  return taken;
}

}  // namespace firebrand

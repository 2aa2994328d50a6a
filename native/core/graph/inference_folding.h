// A graph's inference lowering: a Conv2d whose output only a BatchNorm2d reads
// runs, at inference (the BatchNorm in eval mode, autograd off), as one
// convolution with the BatchNorm folded into its weight and bias, as
// onnxruntime and torch.fx's fuse do:
//   W' = W * gamma / sqrt(var + eps),  b' = (b - mean) * gamma / sqrt(var + eps) + beta.
// The folded weights are computed once and again only when a weight or a
// statistic changes (their version counters); training runs the two layers.
// A ReLU, Hardswish, Hardsigmoid, GELU or SiLU that alone reads the BatchNorm runs inside
// that convolution too. Every other Conv2d runs lowered as well (and the
// activation that alone reads it): with its weight packed once where libtorch
// has oneDNN (packed_convolution.h).
#pragma once
#include <vector>

#include "core/graph/module_tree.h"
#include "core/graph/node_args.h"

namespace firebrand {

// Whether forwards on this thread may run lowered: convolutions may by default, and predict's
// optimizeForInference: false turns that off for its forwards; linear layers only inside predict's scope
// with it on (linear_lowering.h: their packed copies would double a language model's weights in generate).
class InferenceLoweringScope {
 public:
  explicit InferenceLoweringScope(bool allowed);
  ~InferenceLoweringScope();
  InferenceLoweringScope(const InferenceLoweringScope&) = delete;
  InferenceLoweringScope& operator=(const InferenceLoweringScope&) = delete;

 private:
  bool previous_, previousPrediction_;
};

// Whether this forward may run lowered: lowering is allowed on this thread and nothing needs gradients.
bool inferenceLoweringActive();
// Whether it is also a predict's, whose linear layers run lowered.
bool predictionLoweringActive();

// Rewrites `steps` (one per node of `graph`, `reads` the nodes each reads) so that each such pair
// folds, and every other convolution runs lowered, at inference; returns how many pairs it folded.
size_t lowerConvolutions(const GraphSpec& graph, const std::vector<std::vector<int64_t>>& reads, ModuleTree& tree,
                         std::vector<OpRun>& steps);

}  // namespace firebrand

// A traced graph's LayerNorm layers at inference: inside a predict lowered for inference
// (inference_folding.h's predictionLoweringActive), one normalized over the last dimension runs firebrand's
// row kernel (nn/layer_norm_rows.h) where the CPU has AVX-512, and libtorch's op elsewhere.
#pragma once
#include <vector>

#include "core/graph/module_tree.h"
#include "core/graph/node_args.h"

namespace firebrand {

// Rewrites `steps` (one per node of `graph`, `reads` the nodes each reads) so that each LayerNorm layer call runs
// so in a lowered predict; returns how many it took.
size_t lowerLayerNorms(const GraphSpec& graph, const std::vector<std::vector<int64_t>>& reads, ModuleTree& tree,
                       std::vector<OpRun>& steps);

}  // namespace firebrand

// A traced graph's float32 linear layers at inference: inside a predict lowered for inference
// (inference_folding.h's predictionLoweringActive), each runs as a oneDNN 3 matmul whose weight is packed once
// per weight version (onednn_linear.h), with the GELU, SiLU, ReLU, Hardswish or Hardsigmoid that alone reads it
// inside it, as onnxruntime fuses MatMul+Add+activation. A few rows (generation's one position) keep the
// streamed kernel, and a layer with a LoRA adapter, an int8 weight or autocast runs as written.
#pragma once
#include <vector>

#include "core/graph/module_tree.h"
#include "core/graph/node_args.h"

namespace firebrand {

// Rewrites `steps` (one per node of `graph`, `reads` the nodes each reads) so that each linear layer call, and
// the activation that alone reads it, run so in a lowered predict; returns how many layer calls it took.
size_t lowerLinearLayers(const GraphSpec& graph, const std::vector<std::vector<int64_t>>& reads, ModuleTree& tree,
                         std::vector<OpRun>& steps);

}  // namespace firebrand

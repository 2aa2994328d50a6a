// A graph's inference lowering to channels-last activations, as onnxruntime
// keeps its NCHWc layout and torch.jit.optimize_for_inference its oneDNN one
// from convolution to convolution: at inference (autograd off, lowering
// allowed) each Conv2d layer on the CPU reads its input channels-last (NHWC),
// which oneDNN convolves without reordering the activations twice, and the
// elementwise ops, norms and pooling between convolutions pass that layout
// on. Every other op, and the graph's outputs, see contiguous tensors again:
// the values are the same, only their order in memory differs.
#pragma once
#include <vector>

#include "core/graph/module_tree.h"
#include "core/graph/node_args.h"

namespace firebrand {

// Rewrites `steps` (one per node of `graph`, `reads` the nodes each reads) for the lowering.
void keepChannelsLast(const GraphSpec& graph, const std::vector<std::vector<int64_t>>& reads, ModuleTree& tree,
                      std::vector<OpRun>& steps);

// `output` in the default (contiguous) order where the lowering left it channels-last.
at::Tensor withoutChannelsLast(const at::Tensor& output);

}  // namespace firebrand

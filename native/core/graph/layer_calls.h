// Graph nodes that call a built-in layer of the model's module tree: "layer"
// (one tensor in and out), "recurrent" (LSTM, GRU, RNN) and
// "multiheadAttention". Each runs the layer held at the node's module path.
#pragma once
#include <string>

#include "core/graph/module_tree.h"
#include "core/graph/node_args.h"

namespace firebrand {

bool isLayerCall(const std::string& op);
// The node's run, or an empty OpRun when its op does not call a layer.
OpRun compileLayerCall(const NodeArgs& args, ModuleTree& tree);
// The built-in layer a "layer" node (node `index` of its graph) calls, or null for any other node.
TreeLayer* calledLayer(const GraphNode& node, size_t index, ModuleTree& tree);

}  // namespace firebrand

// A traced forward as TorchScript source: one statement per graph node, in
// node order, over the attributes a ScriptWriter registered.
#pragma once
#include <map>
#include <string>

#include "core/model/torchscript_writer.h"
#include "core/nn/module_tree.h"

namespace firebrand {

// `layers`: each built-in layer's spec by module path.
std::string graphScript(const GraphSpec& graph, const ModuleTree& tree, const std::map<std::string, LayerSpec>& layers,
                        const ScriptWriter& writer);

}  // namespace firebrand

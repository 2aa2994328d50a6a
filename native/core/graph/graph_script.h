// A traced forward as TorchScript source: one statement per graph node, in
// node order, over the attributes a ScriptWriter registered.
#pragma once
#include <string>

#include "core/graph/module_tree.h"
#include "core/graph/script_writer.h"

namespace firebrand {

std::string graphScript(const GraphSpec& graph, const ModuleTree& tree, const ScriptWriter& writer);

}  // namespace firebrand

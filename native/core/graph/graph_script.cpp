#include "core/graph/graph_script.h"

#include <set>

#include "core/errors.h"
#include "core/graph/layer_calls.h"
#include "core/graph/op_support.h"
#include "core/nn/layer_row.h"
#include "core/nn/script_text.h"

namespace firebrand {
namespace {

// What forward returns: one tensor, a tuple (an array's outputs) or a Dict[str, Tensor].
std::string returned(const GraphSpec& graph) {
  const auto variable = [&](size_t i) { return "v" + std::to_string(graph.outputs.at(i)); };
  if (graph.returns.kind == OutputLayout::Kind::Tensor) return variable(0);
  const bool array = graph.returns.kind == OutputLayout::Kind::Array;
  std::string out;
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    out += (i ? ", " : "") + (array ? "" : scriptString(graph.returns.names[i]) + ": ") + variable(i);
  }
  if (array) return "(" + out + (graph.outputs.size() == 1 ? ",)" : ")");
  return "{" + out + "}";
}

}  // namespace

std::string graphScript(const GraphSpec& graph, const ModuleTree& tree, const ScriptWriter& writer) {
  std::string source = "def forward(self, input):\n";
  std::set<const char*> methods;  // helper methods the layer calls use, each defined once
  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    const GraphNode& node = graph.nodes[index];
    std::string expression;
    if (node.op == "input") {
      // A model cast as a whole casts its floating inputs, as GraphProgram does.
      expression = !tree.inputDtype ? "input"
                                    : "(input.to(dtype=" + std::to_string(static_cast<int>(*tree.inputDtype)) +
                                          ") if input.is_floating_point() else input)";
    } else if (node.op == "state") {
      expression = writer.tensor(*node.args.at(0).string());
    } else if (isLayerCall(node.op)) {
      const std::string& path = *node.args.at(0).string();
      const TreeLayer& layer = tree.layers.at(path);
      LayerScriptContext context;
      context.tensor = [&](const std::string& name) { return writer.tensor(path.empty() ? name : path + "." + name); };
      for (const auto& name : layer.built.module.ptr()->named_parameters(/*recurse=*/false).keys())
        context.parameters.push_back(name);
      for (size_t i = 1; i < node.args.size(); ++i) context.operands.push_back(scriptLiteral(node.args[i]));
      const ScriptCall call = layerScript(layer.spec, context);
      expression = call.expression;
      if (call.method) methods.insert(call.method);
    } else {
      const OpRow* row = findOp(node.op);
      if (!row) throw InvalidState("exportTorchScript: no TorchScript form for op '" + node.op + "'");
      ScriptArgs args;
      for (const auto& arg : node.args) args.push_back(scriptLiteral(arg));
      expression = row->torchScript(node, args);
    }
    source += "    v" + std::to_string(index) + " = " + expression + "\n";
  }
  source += "    return " + returned(graph) + "\n";
  for (const char* method : methods) source += method;
  return source;
}

}  // namespace firebrand

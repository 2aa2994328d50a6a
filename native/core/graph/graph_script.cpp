#include "core/graph/graph_script.h"

#include "core/errors.h"
#include "core/graph/op_support.h"
#include "core/nn/script_text.h"
#include "core/nn/attention_script.h"
#include "core/nn/recurrent_script.h"

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
  bool attention = false;  // whether forward calls _multihead_attention
  bool packed = false;     // whether it calls _packed_recurrent
  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    const GraphNode& node = graph.nodes[index];
    const std::string variable = "v" + std::to_string(index);
    if (node.op == "input") {
      source += "    " + variable + " = input\n";
    } else if (node.op == "state") {
      source += "    " + variable + " = " + writer.tensor(*node.args.at(0).string()) + "\n";
    } else if (node.op == "multiheadAttention") {
      ScriptArgs args;
      for (size_t i = 1; i < node.args.size(); ++i) args.push_back(scriptLiteral(node.args[i]));
      const std::string& path = *node.args.at(0).string();
      source += "    " + variable + " = " + multiheadAttentionCall(tree.layers.at(path).spec, [&](const std::string& name) { return writer.tensor(path + "." + name); }, args) + "\n";
      attention = true;
    } else if (node.op == "recurrent") {
      const std::string& path = *node.args.at(0).string();
      source += "    " + variable + " = " +
                writer.recurrent(tree.layers.at(path).spec, tree.layers.at(path).built.module, path, scriptLiteral(node.args.at(1)),
                                 scriptLiteral(node.args.at(2)), scriptLiteral(node.args.at(3)), scriptLiteral(node.args.at(4))) +
                "\n";
      packed = packed || !isNullArg(node, 4);
    } else if (node.op == "layer") {
      const std::string& path = *node.args.at(0).string();
      source += "    x = " + scriptLiteral(node.args.at(1)) + "\n";
      source += "    " + variable + " = " + writer.layer(tree.layers.at(path).spec, tree.layers.at(path).built.module, path) + "\n";
    } else {
      const OpRow* row = findOp(node.op);
      if (!row) throw InvalidState("exportTorchScript: no TorchScript form for op '" + node.op + "'");
      ScriptArgs args;
      for (const auto& arg : node.args) args.push_back(scriptLiteral(arg));
      source += "    " + variable + " = " + row->torchScript(node, args) + "\n";
    }
  }
  return source + "    return " + returned(graph) + "\n" + (attention ? kMultiheadAttentionMethod : "") +
         (packed ? kPackedRecurrentMethod : "");
}

}  // namespace firebrand

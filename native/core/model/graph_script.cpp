#include "core/model/graph_script.h"

#include <functional>
#include <unordered_map>

#include "core/errors.h"
#include "core/model/attention_script.h"
#include "core/model/recurrent_script.h"

namespace firebrand {
namespace {

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

// A JSON argument as a TorchScript expression: {"v": k} is node k's variable.
std::string literal(const JsonValue& value) {
  if (const auto* object = value.object()) return "v" + std::to_string(*object->at("v").integer());
  if (const auto* list = value.array()) {
    std::string out = "[";
    for (size_t i = 0; i < list->size(); ++i) out += (i ? ", " : "") + literal((*list)[i]);
    return out + "]";
  }
  if (const auto* integer = value.integer()) return std::to_string(*integer);
  if (const auto* number = std::get_if<double>(&value.value)) return scriptNumber(*number);
  if (const auto* flag = std::get_if<bool>(&value.value)) return scriptBool(*flag);
  if (const auto* text = value.string()) return quoted(*text);
  return "None";
}

// A dims argument given as one integer or a list: always a list.
std::string dims(const JsonValue& value) { return value.array() ? literal(value) : "[" + literal(value) + "]"; }

// A number where the op takes a float: an integral JSON number gets its ".0".
std::string real(const JsonValue& value) {
  if (const auto* integer = value.integer()) return scriptNumber(static_cast<double>(*integer));
  return literal(value);
}

// TorchScript compiled from source without Python has no torch.float32: a dtype is its ScalarType number.
std::string dtype(const JsonValue& value) { return std::to_string(static_cast<int>(dtypeNamed(*value.string(), "exportTorchScript"))); }

using Args = std::vector<std::string>;
using Renderer = std::function<std::string(const GraphNode&, const Args&)>;

std::string call(const std::string& function, const Args& args) {
  std::string out = function + "(";
  for (size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + args[i];
  return out + ")";
}

Renderer function(const std::string& name) {
  return [name](const GraphNode&, const Args& a) { return call(name, a); };
}

bool isNull(const GraphNode& node, size_t i) { return std::holds_alternative<std::nullptr_t>(node.args.at(i).value); }

// F.scaledDotProductAttention as its reference formula (nn/attention.cpp), in ops every PyTorch has.
std::string attention(const GraphNode& n, const Args& a) {
  const std::string& q = a[0];
  const std::string& k = a[1];
  const std::string boolType = std::to_string(static_cast<int>(at::kBool));  // no torch.bool without Python
  const std::string scale = isNull(n, 6) ? "(1.0 / float(" + q + ".size(-1)) ** 0.5)" : real(n.args[6]);
  std::string weights = "torch.matmul(" + q + ", " + k + ".transpose(-2, -1)) * " + scale;
  if (const auto* causal = std::get_if<bool>(&n.args[5].value); causal && *causal) {
    weights = "(" + weights + ").masked_fill(torch.ones([" + q + ".size(-2), " + k + ".size(-2)], dtype=" + boolType + ", device=" + q +
              ".device).tril().logical_not(), float('-inf'))";
  }
  if (!isNull(n, 3)) {
    const std::string& mask = a[3];
    weights = "((" + weights + ").masked_fill(" + mask + ".logical_not(), float('-inf')) if " + mask + ".dtype == " + boolType + " else (" +
              weights + ") + " + mask + ")";
  }
  weights = "torch.softmax(" + weights + ", -1)";
  if (real(n.args[4]) != "0.0") {
    weights = "torch.dropout(" + weights + ", " + real(n.args[4]) + ", self.training)";
  }
  return "torch.matmul(" + weights + ", " + a[2] + ")";
}

const std::unordered_map<std::string, Renderer>& renderers() {
  static const std::unordered_map<std::string, Renderer> table = {
      {"size", [](const GraphNode&, const Args& a) { return a[0] + ".size(" + a[1] + ")"; }},
      {"intAdd", [](const GraphNode&, const Args& a) { return a[0] + " + " + a[1]; }},
      {"intSub", [](const GraphNode&, const Args& a) { return a[0] + " - " + a[1]; }},
      {"intMul", [](const GraphNode&, const Args& a) { return a[0] + " * " + a[1]; }},
      {"intFloorDiv", [](const GraphNode&, const Args& a) { return a[0] + " // " + a[1]; }},
      {"listItem", [](const GraphNode&, const Args& a) { return a[0] + "[" + a[1] + "]"; }},
      {"add", [](const GraphNode&, const Args& a) { return "torch.add(" + a[0] + ", " + a[1] + ", alpha=" + a[2] + ")"; }},
      {"sub", [](const GraphNode&, const Args& a) { return "torch.sub(" + a[0] + ", " + a[1] + ", alpha=" + a[2] + ")"; }},
      {"mul", function("torch.mul")},
      {"pow", function("torch.pow")},
      {"div", [](const GraphNode&, const Args& a) { return "torch.div(" + a[0] + ", " + a[1] + ", rounding_mode=" + a[2] + ")"; }},
      {"neg", function("torch.neg")},
      {"matmul", function("torch.matmul")},
      {"bmm", function("torch.bmm")},
      {"sum", [](const GraphNode& n, const Args& a) { return isNull(n, 1) ? "torch.sum(" + a[0] + ")" : "torch.sum(" + a[0] + ", " + dims(n.args[1]) + ", " + a[2] + ")"; }},
      {"mean", [](const GraphNode& n, const Args& a) { return isNull(n, 1) ? "torch.mean(" + a[0] + ")" : "torch.mean(" + a[0] + ", " + dims(n.args[1]) + ", " + a[2] + ")"; }},
      {"amax", [](const GraphNode& n, const Args& a) { return "torch.amax(" + a[0] + ", " + dims(n.args[1]) + ", " + a[2] + ")"; }},
      {"amin", [](const GraphNode& n, const Args& a) { return "torch.amin(" + a[0] + ", " + dims(n.args[1]) + ", " + a[2] + ")"; }},
      {"maxAll", function("torch.max")},
      {"minAll", function("torch.min")},
      {"maxDim", function("torch.max")},
      {"minDim", function("torch.min")},
      {"argmax", function("torch.argmax")},
      {"argmin", function("torch.argmin")},
      {"logsumexp", [](const GraphNode& n, const Args& a) { return "torch.logsumexp(" + a[0] + ", " + dims(n.args[1]) + ", " + a[2] + ")"; }},
      {"var", [](const GraphNode& n, const Args& a) { return "torch.var(" + a[0] + ", " + (isNull(n, 1) ? "None" : dims(n.args[1])) + ", correction=" + a[2] + ", keepdim=" + a[3] + ")"; }},
      {"std", [](const GraphNode& n, const Args& a) { return "torch.std(" + a[0] + ", " + (isNull(n, 1) ? "None" : dims(n.args[1])) + ", correction=" + a[2] + ", keepdim=" + a[3] + ")"; }},
      {"reshape", [](const GraphNode&, const Args& a) { return a[0] + ".reshape(" + a[1] + ")"; }},
      {"view", [](const GraphNode&, const Args& a) { return a[0] + ".view(" + a[1] + ")"; }},
      {"flatten", function("torch.flatten")},
      {"unflatten", [](const GraphNode& n, const Args& a) { return a[0] + ".unflatten(" + a[1] + ", " + dims(n.args[2]) + ")"; }},
      {"permute", [](const GraphNode&, const Args& a) { return a[0] + ".permute(" + a[1] + ")"; }},
      {"transpose", function("torch.transpose")},
      {"unsqueeze", function("torch.unsqueeze")},
      {"squeeze", [](const GraphNode& n, const Args& a) { return isNull(n, 1) ? "torch.squeeze(" + a[0] + ")" : "torch.squeeze(" + a[0] + ", " + a[1] + ")"; }},
      {"expand", [](const GraphNode&, const Args& a) { return a[0] + ".expand(" + a[1] + ")"; }},
      {"expandAs", [](const GraphNode&, const Args& a) { return a[0] + ".expand_as(" + a[1] + ")"; }},
      {"repeat", [](const GraphNode&, const Args& a) { return a[0] + ".repeat(" + a[1] + ")"; }},
      {"contiguous", [](const GraphNode&, const Args& a) { return a[0] + ".contiguous()"; }},
      {"splitWithSizes", function("torch.split_with_sizes")},
      {"chunk", function("torch.chunk")},
      {"splitSize", [](const GraphNode&, const Args& a) { return "torch.split(" + a[0] + ", " + a[1] + ", " + a[2] + ")"; }},
      {"narrow", function("torch.narrow")},
      {"slice", function("torch.ops.aten.slice")},
      {"select", function("torch.select")},
      {"indexSelect", function("torch.index_select")},
      {"gather", function("torch.gather")},
      {"exp", function("torch.exp")},
      {"log", function("torch.log")},
      {"sqrt", function("torch.sqrt")},
      {"rsqrt", function("torch.rsqrt")},
      {"abs", function("torch.abs")},
      {"sin", function("torch.sin")},
      {"cos", function("torch.cos")},
      {"relu", function("torch.relu")},
      {"sigmoid", function("torch.sigmoid")},
      {"tanh", function("torch.tanh")},
      {"silu", function("torch.silu")},
      {"mish", function("torch.mish")},
      {"hardswish", function("torch.hardswish")},
      {"hardsigmoid", function("torch.hardsigmoid")},
      {"hardtanh", [](const GraphNode& n, const Args& a) { return "torch.hardtanh(" + a[0] + ", " + real(n.args[1]) + ", " + real(n.args[2]) + ")"; }},
      {"logicalNot", function("torch.logical_not")},
      {"detach", [](const GraphNode&, const Args& a) { return a[0] + ".detach()"; }},
      {"clamp", [](const GraphNode& n, const Args& a) { return "torch.clamp(" + a[0] + ", " + (isNull(n, 1) ? a[1] : real(n.args[1])) + ", " + (isNull(n, 2) ? a[2] : real(n.args[2])) + ")"; }},
      {"maskedFill", function("torch.masked_fill")},
      {"tril", function("torch.tril")},
      {"triu", function("torch.triu")},
      {"softmax", function("torch.softmax")},
      {"logSoftmax", function("torch.log_softmax")},
      {"scaledDotProductAttention", attention},
      {"dropout", [](const GraphNode& n, const Args& a) { return "torch.dropout(" + a[0] + ", " + real(n.args[1]) + ", self.training)"; }},
      {"gelu", [](const GraphNode&, const Args& a) { return "torch.gelu(" + a[0] + ", approximate=" + a[1] + ")"; }},
      {"leakyRelu", [](const GraphNode& n, const Args& a) { return "torch.leaky_relu(" + a[0] + ", " + real(n.args[1]) + ")"; }},
      {"elu", [](const GraphNode& n, const Args& a) { return "torch.elu(" + a[0] + ", " + real(n.args[1]) + ")"; }},
      {"softplus", [](const GraphNode& n, const Args& a) { return "torch.softplus(" + a[0] + ", " + real(n.args[1]) + ", " + real(n.args[2]) + ")"; }},
      {"eq", function("torch.eq")},
      {"ne", function("torch.ne")},
      {"lt", function("torch.lt")},
      {"le", function("torch.le")},
      {"gt", function("torch.gt")},
      {"ge", function("torch.ge")},
      {"toDtype", [](const GraphNode& n, const Args& a) { return a[0] + ".to(" + dtype(n.args[1]) + ")"; }},
      {"linear", function("torch.linear")},
      {"layerNorm", [](const GraphNode& n, const Args& a) { return "torch.layer_norm(" + a[0] + ", " + dims(n.args[1]) + ", " + a[2] + ", " + a[3] + ", " + real(n.args[4]) + ")"; }},
      {"groupNorm", [](const GraphNode& n, const Args& a) { return "torch.group_norm(" + a[0] + ", " + a[1] + ", " + a[2] + ", " + a[3] + ", " + real(n.args[4]) + ")"; }},
      {"conv1d", function("torch.conv1d")},
      {"conv2d", function("torch.conv2d")},
      {"conv3d", function("torch.conv3d")},
      {"maxPool1d", function("torch.max_pool1d")},
      {"maxPool2d", function("torch.max_pool2d")},
      {"maxPool3d", function("torch.max_pool3d")},
      {"avgPool1d", function("torch.avg_pool1d")},
      {"avgPool2d", function("torch.avg_pool2d")},
      {"avgPool3d", function("torch.avg_pool3d")},
      {"adaptiveAvgPool1d", function("torch.adaptive_avg_pool1d")},
      {"adaptiveAvgPool2d", function("torch.adaptive_avg_pool2d")},
      {"adaptiveAvgPool3d", function("torch.adaptive_avg_pool3d")},
      {"interpolate2d", [](const GraphNode& n, const Args& a) {
         return scriptInterpolate(a[0], a[1], isNull(n, 2) ? a[2] : real(n.args[2]), *n.args[3].string() == "nearest", a[4]);
       }},
      {"constantPad", function("torch.constant_pad_nd")},
      {"embedding", function("torch.embedding")},
      {"cat", function("torch.cat")},
      {"stack", function("torch.stack")},
      {"where", function("torch.where")},
      {"arange", [](const GraphNode& n, const Args& a) {
         return "torch.arange(" + a[0] + ", " + a[1] + ", " + a[2] + ", dtype=" + dtype(n.args[3]) + ", device=input.device)";
       }},
      {"fullLike", function("torch.full_like")},
      {"full", [](const GraphNode& n, const Args& a) { return "torch.full(" + a[0] + ", " + a[1] + ", dtype=" + dtype(n.args[2]) + ", device=input.device)"; }},
  };
  return table;
}

// What forward returns: one tensor, a tuple (an array's outputs) or a Dict[str, Tensor].
std::string returned(const GraphSpec& graph) {
  const auto variable = [&](size_t i) { return "v" + std::to_string(graph.outputs.at(i)); };
  if (graph.returns.kind == OutputLayout::Kind::Tensor) return variable(0);
  const bool array = graph.returns.kind == OutputLayout::Kind::Array;
  std::string out;
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    out += (i ? ", " : "") + (array ? "" : quoted(graph.returns.names[i]) + ": ") + variable(i);
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
      Args args;
      for (size_t i = 1; i < node.args.size(); ++i) args.push_back(literal(node.args[i]));
      const std::string& path = *node.args.at(0).string();
      source += "    " + variable + " = " + multiheadAttentionCall(writer, tree.layers.at(path).spec, path, args) + "\n";
      attention = true;
    } else if (node.op == "recurrent") {
      const std::string& path = *node.args.at(0).string();
      source += "    " + variable + " = " +
                writer.recurrent(tree.layers.at(path).spec, tree.layers.at(path).built.module, path, literal(node.args.at(1)),
                                 literal(node.args.at(2)), literal(node.args.at(3)), literal(node.args.at(4))) +
                "\n";
      packed = packed || !isNull(node, 4);
    } else if (node.op == "layer") {
      const std::string& path = *node.args.at(0).string();
      source += "    x = " + literal(node.args.at(1)) + "\n";
      source += "    " + variable + " = " + writer.layer(tree.layers.at(path).spec, tree.layers.at(path).built.module, path) + "\n";
    } else {
      const auto it = renderers().find(node.op);
      if (it == renderers().end()) throw InvalidState("exportTorchScript: no TorchScript form for op '" + node.op + "'");
      Args args;
      for (const auto& arg : node.args) args.push_back(literal(arg));
      source += "    " + variable + " = " + it->second(node, args) + "\n";
    }
  }
  return source + "    return " + returned(graph) + "\n" + (attention ? kMultiheadAttentionMethod : "") +
         (packed ? kPackedRecurrentMethod : "");
}

}  // namespace firebrand

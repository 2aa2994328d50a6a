#include "core/graph/graph_onnx.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>

#include "core/errors.h"
#include "core/graph/layer_calls.h"
#include "core/graph/onnx_op.h"
#include "core/graph/op_row.h"
#include "core/nn/layer_row.h"

namespace firebrand {
namespace {

OnnxValueInfo declared(const std::string& name, const at::Tensor& example, bool fixedSizes,
                       const std::map<std::string, std::map<int64_t, std::string>>& dynamicAxes) {
  OnnxValueInfo info{name, example.scalar_type(), {}};
  const auto axes = dynamicAxes.find(name);
  for (int64_t d = 0; d < example.dim(); ++d) {
    OnnxDim dim;
    if (fixedSizes) dim.size = example.size(d);
    if (axes != dynamicAxes.end()) {
      const auto axis = axes->second.find(d);
      if (axis != axes->second.end()) dim = {-1, axis->second};
    }
    info.dims.push_back(dim);
  }
  return info;
}

// A constant argument as the example value a layer's ONNX form reads.
c10::IValue constantValue(const JsonValue& value) {
  if (const auto* flag = std::get_if<bool>(&value.value)) return *flag;
  if (const auto* integer = value.integer()) return *integer;
  if (const auto* number = std::get_if<double>(&value.value)) return *number;
  if (const auto* text = value.string()) return *text;
  return c10::IValue();
}

OnnxValue layerNode(const GraphNode& node, size_t index, const ModuleTree& tree, OnnxBuilder& b,
                    const std::vector<OnnxValue>& names, const std::vector<c10::IValue>& examples) {
  const NodeArgs args(node, index);
  const std::string path = args.text(0);
  const TreeLayer& layer = tree.layers.at(path);
  const auto parameters = layer.built.module.ptr()->named_parameters();
  const auto buffers = layer.built.module.ptr()->named_buffers();
  OnnxLayerCall call{b, {}, {}, {}, {}, examples[index]};
  call.tensor = [&](const std::string& name) -> std::string {
    const std::string stateName = path.empty() ? name : path + "." + name;
    if (const auto* parameter = parameters.find(name)) return b.weight(stateName, *parameter);
    if (const auto* buffer = buffers.find(name)) return b.weight(stateName, *buffer);
    return "";
  };
  call.value = [&](const std::string& name) -> at::Tensor {
    if (const auto* parameter = parameters.find(name)) return *parameter;
    if (const auto* buffer = buffers.find(name)) return *buffer;
    throw InvalidState("firebrand bug: " + layer.owner + " has no tensor '" + name + "'");
  };
  for (size_t i = 1; i < node.args.size(); ++i) {
    if (args.isTensor(i)) {
      call.operands.push_back(names[args.tensor(i)].at(0));
      call.examples.push_back(examples[args.tensor(i)]);
    } else {
      call.operands.push_back("");
      call.examples.push_back(constantValue(node.args[i]));
    }
  }
  return layerOnnx(layer.spec, call);
}

// Raw uint8 images through the saved transforms' ONNX forms.
std::string rawImagesThrough(const ImageTransforms& transforms, OnnxBuilder& b, const std::string& images,
                             size_t inputs) {
  if (inputs != 1)
    throw NotExportable("image preprocessing is folded into a model of one input; this one takes " +
                        std::to_string(inputs));
  std::string value = images;
  for (const ImageTransform& transform : transforms) {
    if (!transform.onnx) {
      throw NotExportable("the saved image " + transform.owner +
                          " has no ONNX form giving the same values; export without preprocessing and apply it "
                          "before the model");
    }
    value = transform.onnx(b, value);
  }
  return value;
}

std::string nodeLocation(const GraphNode& node) {
  return (node.scope.empty() ? std::string("forward") : node.scope) + " (" + node.op +
         (node.at.empty() ? "" : ", at " + node.at) + ")";
}

}  // namespace

std::vector<std::string> onnxOutputNames(const GraphSpec& graph) {
  switch (graph.returns.kind) {
    case OutputLayout::Kind::Tensor:
      return {"output"};
    case OutputLayout::Kind::Array: {
      std::vector<std::string> names;
      for (size_t i = 0; i < graph.outputs.size(); ++i) names.push_back("output_" + std::to_string(i));
      return names;
    }
    default:
      return graph.returns.names;
  }
}

OnnxGraph graphOnnx(const GraphProgram& program, const ModuleTree& tree, const std::vector<at::Tensor>& example,
                    const OnnxExportOptions& options) {
  const GraphSpec& graph = program.graph();
  std::vector<c10::IValue> examples;
  {
    at::NoGradGuard noGrad;
    examples = program.values(example, /*training=*/false, c10::kCPU);
  }
  const auto parameters = tree.root->named_parameters();
  const auto buffers = tree.root->named_buffers();
  OnnxBuilder b(options.opset);
  std::vector<OnnxValue> names(graph.nodes.size());
  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    const GraphNode& node = graph.nodes[index];
    b.setScope(node.scope);
    try {
      if (node.op == "input") {
        const std::string name = *node.args.at(0).string();
        const auto position = std::find(graph.inputs.begin(), graph.inputs.end(), name) - graph.inputs.begin();
        const at::Tensor& given = example.at(position);
        OnnxValueInfo input = declared(name, given, /*fixedSizes=*/true, options.dynamicAxes);
        std::string value = name;
        if (options.rawImages) {
          input.dtype = at::kByte;
          value = rawImagesThrough(*options.rawImages, b, name, graph.inputs.size());
        }
        b.addInput(input);
        const at::Tensor& cast = examples[index].toTensor();
        names[index] = {cast.scalar_type() == given.scalar_type() ? value : b.cast(value, cast.scalar_type())};
      } else if (node.op == "state") {
        const std::string name = *node.args.at(0).string();
        const auto* parameter = parameters.find(name);
        names[index] = {b.weight(name, parameter ? *parameter : *buffers.find(name))};
      } else if (isLayerCall(node.op)) {
        names[index] = layerNode(node, index, tree, b, names, examples);
      } else {
        const OpRow* row = findOp(node.op);
        if (!row || !row->onnx) throw NotExportable("firebrand has no ONNX form for op '" + node.op + "' yet");
        const NodeArgs args(node, index);
        names[index] = row->onnx(OnnxOp(b, args, names, examples));
      }
    } catch (const Error& error) {
      throw NotExportable("exportOnnx: " + nodeLocation(node) + ": " + error.what());
    } catch (const std::exception& error) {
      throw NotExportable("exportOnnx: " + nodeLocation(node) + ": " + torchReason(error));
    }
  }
  const std::vector<std::string> outputNames = onnxOutputNames(graph);
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    const int64_t slot = graph.outputs[i];
    b.setScope("");
    b.rename(names[slot].at(0), outputNames[i]);
    b.addOutput(declared(outputNames[i], examples[slot].toTensor(), /*fixedSizes=*/false, options.dynamicAxes));
  }
  return b.take();
}

}  // namespace firebrand

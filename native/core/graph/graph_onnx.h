// A traced forward as an ONNX graph: each node becomes its row's ONNX form
// (op rows: ops_*.cpp; built-in layers: the nn layer rows), the model's tensors
// initializers, the traced sizes Shape nodes, so the axes named dynamic stay
// dynamic in the file.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/graph_program.h"
#include "core/graph/module_tree.h"
#include "core/images/image_transforms.h"
#include "core/onnx/onnx_graph.h"

namespace firebrand {

struct OnnxExportOptions {
  int64_t opset = 17;
  // Named dynamic axes by input or output name: {"input": {0: "batch"}}. Other input axes keep
  // the example's sizes; other output axes are left unknown.
  std::map<std::string, std::map<int64_t, std::string>> dynamicAxes;
  // The saved image preprocessing folded in: the model's one input is then raw uint8 images
  // [N, C, H, W], put through these transforms' ONNX forms.
  std::optional<ImageTransforms> rawImages;
};

// The graph's ONNX form. `example` (one tensor per graph input) runs once in eval mode to give
// every value's dtype and rank. Throws NotExportable naming the module path of an op or layer
// without an ONNX form.
OnnxGraph graphOnnx(const GraphProgram& program, const ModuleTree& tree, const std::vector<at::Tensor>& example,
                    const OnnxExportOptions& options);

// The names of the graph's outputs in the file: "output" for one tensor, "output_<i>" for an
// array, the keys of a dict.
std::vector<std::string> onnxOutputNames(const GraphSpec& graph);

}  // namespace firebrand

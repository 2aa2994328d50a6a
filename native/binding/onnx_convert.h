// exportOnnx's options from JavaScript, and the ONNX graph C++ built as the
// plain object src/export/onnx-file.ts encodes with ONNX's protobuf schema.
#pragma once
#include <napi.h>

#include "core/graph/graph_onnx.h"
#include "core/onnx/onnx_graph.h"

namespace firebrand::binding {

// { opset, dynamicAxes: { name: { axis: label } }, imageTransforms? }
OnnxExportOptions toOnnxExportOptions(const Napi::Value& value);

// { opset, nodes: [{ opType, name, inputs, outputs, attributes: [{ name, kind, value }] }],
//   initializers: [{ name, dataType, dims, data: Buffer }], inputs / outputs: [{ name, dataType, dims }] },
// a dim being a size, a label, or null (unknown).
Napi::Object fromOnnxGraph(Napi::Env env, const OnnxGraph& graph);

}  // namespace firebrand::binding

// One row per op a traced forward may record (src/nn/module/tensor.ts and
// functional.ts write them): how the op compiles to a runnable node and how it
// exports. Rows are kept by family in ops_*.cpp; a new op is one row there and
// one TypeScript line.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/graph/node_args.h"
#include "core/graph/onnx_op.h"

namespace firebrand {

// A node's arguments as TorchScript expressions, in order.
using ScriptArgs = std::vector<std::string>;

struct OpRow {
  std::string name;
  // The node compiled once into a function of earlier nodes' values.
  std::function<OpRun(const NodeArgs&)> compile;
  // The node as one TorchScript expression (`args` are its arguments as literals).
  std::function<std::string(const GraphNode&, const ScriptArgs&)> torchScript;
  // The node as ONNX nodes (empty: the op has no ONNX form, and exportOnnx names it).
  OnnxForm onnx;
};

using OpRows = std::vector<OpRow>;

// The families, each in its own file.
OpRows arithmeticOps();
OpRows reductionOps();
OpRows shapeOps();
OpRows pieceOps();
OpRows elementwiseOps();
OpRows activationOps();
OpRows functionalOps();
OpRows normOps();
OpRows convolutionOps();
OpRows constructorOps();

// The row of `op`, or nullptr.
const OpRow* findOp(const std::string& op);
// Every row, by name.
std::vector<const OpRow*> allOps();

}  // namespace firebrand

// A model written as TypeScript modules, as src/nn/module/graph-model.ts
// describes it: the module tree, the order its random initialisation ran
// in, and the traced forward graph. Parsed from the JSON TypeScript sends.
#pragma once
#include <c10/core/ScalarType.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/io/json.h"
#include "core/nn/layer_spec.h"
#include "core/output_layout.h"

namespace firebrand {

struct StateTensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  at::ScalarType dtype = at::kFloat;
  bool requiresGrad = true;  // parameters
  double fill = 0;           // buffers: every element, unless data is given
  std::vector<double> data;  // buffers: values in row-major order
  bool persistent = true;    // buffers: false keeps it out of the state dict (register_buffer's persistent)
};

// A field that holds a tensor of another module (weight tying): `source` is that tensor's state-dict name.
struct StateTie {
  std::string name;
  std::string source;
  bool buffer = false;
};

struct ModuleSpec {
  std::string className;
  std::unique_ptr<LayerSpec> layer;  // a built-in layer: its tensors are the torch::nn module's
  std::vector<StateTensorSpec> parameters;
  std::vector<StateTensorSpec> buffers;
  std::vector<StateTie> ties;
  // The names of parameters, buffers and ties in the order the module's fields were declared, which is
  // PyTorch's state-dict order (a tied field among the module's own); empty: parameters, buffers, ties.
  std::vector<std::string> order;
  std::vector<std::pair<std::string, ModuleSpec>> children;
};

// A layer built (its default initialisation), an nn.init call, a module's values copied into
// another (a deep copy, as nn.transformerEncoder's layers are), or a module cast to a dtype
// (module.to(dtype)), in the order they ran.
struct ConstructionStep {
  // What the step does. The paths alone cannot say: the model itself is the path "" (a bare layer as the model).
  enum class Kind { Layer, Init, Copy, Cast } kind = Kind::Init;
  std::string layerPath;     // set for a layer
  bool copiedLayer = false;  // a layer of a copy: its values come from the copy step, its build draws nothing
  std::string initTarget;    // set for an init: the tensor's state-dict name
  std::string scheme;
  OptionMap options;
  std::string copyTo, copyFrom;          // set for a copy: module paths
  std::optional<at::ScalarType> castTo;  // set for a cast, of the module at castPath ("" the model)
  std::string castPath;
};

struct GraphNode {
  std::string op;
  JsonArray args;     // constants, or {"v": index} for an earlier node's value
  std::string scope;  // the module path the op ran in
  std::string at;     // the forward's source line that recorded it
};

// A module call whose module names a native decode kernel (trace.ts's DecodeKernelSpec): the module
// path, the node of each argument (-1: not a tensor) and of its output, and the kernel's shape.
struct DecodeKernelCall {
  std::string kind;
  std::string module;
  std::vector<int64_t> inputs;
  int64_t output = -1;
  int64_t heads = 0, kvHeads = 0, headDim = 0;
  double eps = 0;
  std::optional<int64_t> window;
};

struct GraphSpec {
  std::vector<std::string> inputs;
  std::vector<GraphNode> nodes;
  std::vector<int64_t> outputs;  // node indices, one per returns.names entry
  OutputLayout returns;
  std::vector<DecodeKernelCall> decodeKernels;
};

struct GraphModelSpec {
  ModuleSpec modules;
  std::vector<ConstructionStep> construction;
  GraphSpec graph;
  // State names whose values a checkpoint loads right after the build (fromPretrained): not drawn
  // (module_tree.h).
  std::vector<std::string> valuesLoadedLater;
};

// Throws InvalidState ("firebrand bug") for JSON that src/ would never write.
GraphModelSpec parseGraphModel(const std::string& json);

at::ScalarType dtypeNamed(const std::string& name, const std::string& owner);

}  // namespace firebrand

// Writes a model firebrand built as a TorchScript module: its parameters and
// buffers (named like "l0_weight" for "0.weight") and a forward() made of
// aten ops, so torch.jit.load runs it in Python or C++ without firebrand.
#pragma once
#include <string>

namespace firebrand {

class GraphModel;

// Each node of the traced forward becomes one statement.
void exportGraph(const GraphModel& model, const std::string& path);

}  // namespace firebrand

#include "core/model/torchscript_export.h"

#include "core/model/graph_model.h"
#include "core/graph/graph_script.h"
#include "core/model/sequential_model.h"
#include "core/graph/script_writer.h"

namespace firebrand {

void exportSequential(const SequentialModel& model, const std::string& path) {
  ScriptWriter writer(model.module(), "FirebrandSequential");
  std::string source = "def forward(self, x):\n";
  for (size_t index = 0; index < model.spec().size(); ++index) {
    source += "    x = " + writer.layer(model.spec()[index], model.layerModule(index), std::to_string(index)) + "\n";
  }
  source += "    return x\n";
  writer.save(source, path);
}

void exportGraph(const GraphModel& model, const std::string& path) {
  ScriptWriter writer(*model.tree().root, "FirebrandModule");
  writer.save(graphScript(model.graph(), model.tree(), writer), path);
}

}  // namespace firebrand

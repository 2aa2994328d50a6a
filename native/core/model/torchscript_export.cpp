#include "core/model/torchscript_export.h"

#include "core/graph/graph_script.h"
#include "core/graph/script_writer.h"
#include "core/model/graph_model.h"

namespace firebrand {

void exportGraph(const GraphModel& model, const std::string& path) {
  ScriptWriter writer(*model.tree().root, "FirebrandModule");
  writer.save(graphScript(model.graph(), model.tree(), writer), path);
}

}  // namespace firebrand

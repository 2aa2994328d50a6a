#include <map>

#include "core/errors.h"
#include "core/graph/op_row.h"

namespace firebrand {
namespace {

const std::map<std::string, OpRow>& table() {
  static const std::map<std::string, OpRow> rows = [] {
    std::map<std::string, OpRow> all;
    for (OpRows (*family)() : {arithmeticOps, reductionOps, shapeOps, elementwiseOps, activationOps, functionalOps, convolutionOps, constructorOps}) {
      for (OpRow& row : family()) {
        const std::string name = row.name;
        if (!all.emplace(name, std::move(row)).second) throw InvalidState("firebrand bug: op '" + name + "' has two rows");
      }
    }
    return all;
  }();
  return rows;
}

}  // namespace

const OpRow* findOp(const std::string& op) {
  const auto it = table().find(op);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<const OpRow*> allOps() {
  std::vector<const OpRow*> rows;
  for (const auto& [name, row] : table()) rows.push_back(&row);
  return rows;
}

}  // namespace firebrand

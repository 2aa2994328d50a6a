#include "core/graph/op_row.h"
#include "core/row_table.h"

namespace firebrand {
namespace {

const std::map<std::string, OpRow>& table() {
  static const auto rows = rowTable<OpRow>({arithmeticOps, reductionOps, shapeOps, pieceOps, elementwiseOps,
                                            activationOps, functionalOps, normOps, convolutionOps, constructorOps},
                                           &OpRow::name);
  return rows;
}

}  // namespace

const OpRow* findOp(const std::string& op) { return rowNamed(table(), op); }

std::vector<const OpRow*> allOps() { return rowsOf(table()); }

}  // namespace firebrand

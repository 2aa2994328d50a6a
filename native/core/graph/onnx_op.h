// What an op row's ONNX form reads: the node's arguments, the ONNX names of
// the values it reads, and each value's example from one eval forward on the
// export's example inputs. Examples give dtypes and ranks; sizes stay dynamic
// (a traced size is a Shape in the graph, never the example's number).
#pragma once
#include <ATen/core/ivalue.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/node_args.h"
#include "core/onnx/onnx_builder.h"

namespace firebrand {

class OnnxOp {
 public:
  OnnxOp(OnnxBuilder& builder, const NodeArgs& args, const std::vector<OnnxValue>& names,
         const std::vector<c10::IValue>& examples)
      : b(builder), args(args), names_(names), examples_(examples) {}

  OnnxBuilder& b;
  const NodeArgs& args;

  // Argument i's tensor (or integer) by its ONNX name.
  std::string tensor(size_t i) const;
  std::optional<std::string> optionalTensor(size_t i) const;
  // Argument i's value as a whole: a list's items.
  const OnnxValue& value(size_t i) const { return names_.at(args.tensor(i)); }
  // Argument i's list of tensors.
  std::vector<std::string> tensors(size_t i) const;
  // Argument i's value in the example forward.
  const at::Tensor& example(size_t i) const;
  // The example value of node `slot` (an item of a list argument).
  const c10::IValue& exampleOf(int64_t slot) const { return examples_.at(slot); }
  int64_t rank(size_t i) const { return example(i).dim(); }
  at::ScalarType dtype(size_t i) const { return example(i).scalar_type(); }
  // This node's own example value.
  const c10::IValue& result() const { return examples_.at(args.index()); }
  at::ScalarType resultType() const { return result().toTensor().scalar_type(); }
  int64_t resultRank() const { return result().toTensor().dim(); }

  // A constant integer argument (a dim, a count); a traced size here cannot be exported.
  int64_t constant(size_t i) const;
  std::vector<int64_t> constants(size_t i) const;
  // An integer argument as a 0-d int64 value, constant or traced.
  std::string integer(size_t i) const;
  // An integer-list argument as a 1-D int64 tensor, its traced sizes read at run time.
  std::string integers(size_t i) const;
  // Argument i, a tensor or a number, as a tensor of `dtype`.
  std::string operand(size_t i, at::ScalarType dtype) const;

 private:
  const std::vector<OnnxValue>& names_;
  const std::vector<c10::IValue>& examples_;
};

using OnnxForm = std::function<OnnxValue(const OnnxOp&)>;

// A dim of a tensor of `rank` as ONNX reads it: in [0, rank).
int64_t normalizedDim(int64_t dim, int64_t rank);

}  // namespace firebrand

#include "core/graph/onnx_op.h"

#include "core/errors.h"

namespace firebrand {

int64_t normalizedDim(int64_t dim, int64_t rank) { return dim < 0 ? dim + rank : dim; }

std::string OnnxOp::tensor(size_t i) const { return names_.at(args.tensor(i)).at(0); }

std::optional<std::string> OnnxOp::optionalTensor(size_t i) const {
  const auto slot = args.optionalTensor(i);
  if (!slot) return std::nullopt;
  return names_.at(*slot).at(0);
}

std::vector<std::string> OnnxOp::tensors(size_t i) const {
  std::vector<std::string> out;
  for (const int64_t slot : args.tensors(i)) out.push_back(names_.at(slot).at(0));
  return out;
}

const at::Tensor& OnnxOp::example(size_t i) const { return examples_.at(args.tensor(i)).toTensor(); }

int64_t OnnxOp::constant(size_t i) const {
  const IntArg value = args.integer(i);
  if (value.slot >= 0)
    throw NotExportable("argument " + std::to_string(i) + " is a traced size; ONNX needs a constant here");
  return value.value;
}

std::vector<int64_t> OnnxOp::constants(size_t i) const {
  std::vector<int64_t> out;
  for (const IntArg& value : args.integers(i)) {
    if (value.slot >= 0)
      throw NotExportable("argument " + std::to_string(i) + " holds a traced size; ONNX needs constants here");
    out.push_back(value.value);
  }
  return out;
}

std::string OnnxOp::integer(size_t i) const {
  const IntArg value = args.integer(i);
  if (value.slot >= 0) return names_.at(value.slot).at(0);
  return b.scalar(static_cast<double>(value.value), at::kLong);
}

std::string OnnxOp::integers(size_t i) const {
  const std::vector<IntArg> values = args.integers(i);
  bool traced = false;
  for (const IntArg& value : values) traced = traced || value.slot >= 0;
  if (!traced) return b.ints(constants(i));
  std::vector<std::string> parts;
  for (const IntArg& value : values)
    parts.push_back(value.slot >= 0 ? b.unsqueeze(names_.at(value.slot).at(0), {0}) : b.ints({value.value}));
  return b.op("Concat", parts, {{"axis", int64_t{0}}});
}

std::string OnnxOp::operand(size_t i, at::ScalarType dtype) const {
  if (!args.isTensor(i)) return b.scalar(args.number(i), dtype);
  const c10::IValue& value = examples_.at(args.tensor(i));
  const at::ScalarType given = value.isTensor() ? value.toTensor().scalar_type() : at::kLong;
  const std::string name = tensor(i);
  return given == dtype ? name : b.cast(name, dtype);
}

}  // namespace firebrand

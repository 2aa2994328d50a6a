// What a graph node compiles against: the frame of values one forward fills,
// the function a node compiles to, and its arguments read by position and
// kind. TypeScript owns the ops' signatures and defaults; a node here carries
// every argument.
#pragma once
#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/decode_cache.h"
#include "core/graph/module_spec.h"

namespace firebrand {

// The values of one forward's nodes, by node index.
struct GraphFrame {
  std::vector<c10::IValue> values;
  std::vector<bool> ranLowered;  // by node: a layer call that ran lowered (lowered_steps.h); empty until one does
  bool training = true;
  c10::Device device = c10::kCPU;
  DecodeCache* cache = nullptr;  // incremental decoding: the earlier positions; null in a plain forward
};

using OpRun = std::function<c10::IValue(GraphFrame&)>;

// An integer argument: a constant, or a traced size read at every step.
struct IntArg {
  int64_t slot = -1;
  int64_t value = 0;
  int64_t get(const GraphFrame& frame) const { return slot < 0 ? value : frame.values[slot].toInt(); }
};

// A node's arguments, read by position and kind (a wrong kind is a firebrand bug).
class NodeArgs {
 public:
  NodeArgs(const GraphNode& node, size_t index) : node_(node), index_(index) {}

  int64_t tensor(size_t i) const;
  std::optional<int64_t> optionalTensor(size_t i) const;
  std::vector<int64_t> tensors(size_t i) const;
  bool isTensor(size_t i) const;
  IntArg integer(size_t i) const;
  std::optional<IntArg> optionalInteger(size_t i) const;
  // A list of integers; a single integer is a list of one.
  std::vector<IntArg> integers(size_t i) const;
  std::optional<std::vector<IntArg>> optionalIntegers(size_t i) const;
  double number(size_t i) const;
  std::optional<double> optionalNumber(size_t i) const;
  bool flag(size_t i) const;
  std::string text(size_t i) const;
  std::optional<std::string> optionalText(size_t i) const;
  void expectCount(size_t count) const;

  const GraphNode& node() const { return node_; }
  size_t index() const { return index_; }

 private:
  const JsonValue& arg(size_t i) const;
  [[noreturn]] void bad(size_t i, const char* expected) const;
  std::optional<int64_t> slotOf(const JsonValue& value) const;

  const GraphNode& node_;
  size_t index_;
};

std::vector<int64_t> intValues(const std::vector<IntArg>& args, const GraphFrame& frame);

}  // namespace firebrand

// NodeArgs: a traced node's arguments by position and kind.
#include "core/graph/node_args.h"

#include "core/errors.h"

namespace firebrand {

const JsonValue& NodeArgs::arg(size_t i) const {
  if (i >= node_.args.size()) bad(i, "present");
  return node_.args[i];
}

void NodeArgs::bad(size_t i, const char* expected) const {
  throw InvalidState("firebrand bug: node " + std::to_string(index_) + " (" + node_.op + ") argument " +
                     std::to_string(i) + " is not " + expected);
}

void NodeArgs::expectCount(size_t count) const {
  if (node_.args.size() != count) {
    throw InvalidState("firebrand bug: node " + std::to_string(index_) + " (" + node_.op + ") has " +
                       std::to_string(node_.args.size()) + " arguments, expected " + std::to_string(count));
  }
}

std::optional<int64_t> NodeArgs::slotOf(const JsonValue& value) const {
  const auto* object = value.object();
  if (!object) return std::nullopt;
  const auto it = object->find("v");
  if (it == object->end() || !it->second.integer() || *it->second.integer() < 0 ||
      static_cast<size_t>(*it->second.integer()) >= index_) {
    throw InvalidState("firebrand bug: node " + std::to_string(index_) + " (" + node_.op +
                       ") refers to a later or unknown node");
  }
  return *it->second.integer();
}

int64_t NodeArgs::tensor(size_t i) const {
  const auto slot = slotOf(arg(i));
  if (!slot) bad(i, "a tensor");
  return *slot;
}

bool NodeArgs::isTensor(size_t i) const { return slotOf(arg(i)).has_value(); }

std::optional<int64_t> NodeArgs::optionalTensor(size_t i) const {
  if (std::holds_alternative<std::nullptr_t>(arg(i).value)) return std::nullopt;
  return tensor(i);
}

std::vector<int64_t> NodeArgs::tensors(size_t i) const {
  const auto* list = arg(i).array();
  if (!list) bad(i, "a list of tensors");
  std::vector<int64_t> slots;
  for (const auto& item : *list) {
    const auto slot = slotOf(item);
    if (!slot) bad(i, "a list of tensors");
    slots.push_back(*slot);
  }
  return slots;
}

IntArg NodeArgs::integer(size_t i) const {
  const JsonValue& value = arg(i);
  if (const auto slot = slotOf(value)) return {*slot, 0};
  if (const auto* integer = value.integer()) return {-1, *integer};
  bad(i, "an integer");
}

std::optional<IntArg> NodeArgs::optionalInteger(size_t i) const {
  if (std::holds_alternative<std::nullptr_t>(arg(i).value)) return std::nullopt;
  return integer(i);
}

std::vector<IntArg> NodeArgs::integers(size_t i) const {
  const JsonValue& value = arg(i);
  const auto* list = value.array();
  if (!list) return {integer(i)};
  std::vector<IntArg> out;
  for (const auto& item : *list) {
    if (const auto slot = slotOf(item)) {
      out.push_back({*slot, 0});
    } else if (const auto* integer = item.integer()) {
      out.push_back({-1, *integer});
    } else {
      bad(i, "a list of integers");
    }
  }
  return out;
}

std::optional<std::vector<IntArg>> NodeArgs::optionalIntegers(size_t i) const {
  if (std::holds_alternative<std::nullptr_t>(arg(i).value)) return std::nullopt;
  return integers(i);
}

double NodeArgs::number(size_t i) const {
  const JsonValue& value = arg(i);
  if (const auto* integer = value.integer()) return static_cast<double>(*integer);
  if (const auto* number = std::get_if<double>(&value.value)) return *number;
  bad(i, "a number");
}

std::optional<double> NodeArgs::optionalNumber(size_t i) const {
  if (std::holds_alternative<std::nullptr_t>(arg(i).value)) return std::nullopt;
  return number(i);
}

bool NodeArgs::flag(size_t i) const {
  const auto* flag = std::get_if<bool>(&arg(i).value);
  if (!flag) bad(i, "a boolean");
  return *flag;
}

std::string NodeArgs::text(size_t i) const {
  const auto* text = arg(i).string();
  if (!text) bad(i, "a string");
  return *text;
}

std::optional<std::string> NodeArgs::optionalText(size_t i) const {
  if (std::holds_alternative<std::nullptr_t>(arg(i).value)) return std::nullopt;
  return text(i);
}

std::vector<int64_t> intValues(const std::vector<IntArg>& args, const GraphFrame& frame) {
  std::vector<int64_t> values;
  values.reserve(args.size());
  for (const auto& arg : args) values.push_back(arg.get(frame));
  return values;
}

}  // namespace firebrand

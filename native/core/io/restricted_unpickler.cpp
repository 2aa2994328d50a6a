#include "core/io/restricted_unpickler.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "core/errors.h"

namespace firebrand {
namespace {

const std::map<std::string, c10::ScalarType>& storageTypes() {
  static const std::map<std::string, c10::ScalarType> types = {
      {"torch.FloatStorage", c10::kFloat}, {"torch.DoubleStorage", c10::kDouble},
      {"torch.HalfStorage", c10::kHalf},   {"torch.BFloat16Storage", c10::kBFloat16},
      {"torch.LongStorage", c10::kLong},   {"torch.IntStorage", c10::kInt},
      {"torch.ShortStorage", c10::kShort}, {"torch.CharStorage", c10::kChar},
      {"torch.ByteStorage", c10::kByte},   {"torch.BoolStorage", c10::kBool},
  };
  return types;
}

const std::set<std::string>& callables() {
  static const std::set<std::string> names = {
      "collections.OrderedDict",
      "torch._utils._rebuild_tensor_v2",
      "torch._utils._rebuild_parameter",
      "torch._utils._rebuild_parameter_with_state",
  };
  return names;
}

class Unpickler {
 public:
  Unpickler(const std::string& bytes, const std::string& origin) : bytes_(bytes), origin_(origin) {}

  PickleValue run() {
    while (true) {
      const size_t at = position_;
      const uint8_t opcode = byte();
      if (opcode == '.') {
        if (stack_.size() != 1) fail(at, "STOP with " + std::to_string(stack_.size()) + " values on the stack");
        return pop(at);
      }
      step(opcode, at);
    }
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& what) const {
    throw FileError(origin_ + ": data.pkl at byte " + std::to_string(at) + ": " + what);
  }

  const char* take(size_t count) {
    if (count > bytes_.size() - position_) fail(position_, "ends in the middle of an opcode's argument");
    const char* data = bytes_.data() + position_;
    position_ += count;
    return data;
  }
  uint8_t byte() { return static_cast<uint8_t>(*take(1)); }
  uint64_t littleEndian(size_t count) {
    const auto* data = reinterpret_cast<const uint8_t*>(take(count));
    uint64_t value = 0;
    for (size_t i = 0; i < count; ++i) value |= static_cast<uint64_t>(data[i]) << (8 * i);
    return value;
  }
  std::string line() {
    const size_t end = bytes_.find('\n', position_);
    if (end == std::string::npos) fail(position_, "GLOBAL without its newline");
    std::string text = bytes_.substr(position_, end - position_);
    position_ = end + 1;
    return text;
  }

  PickleValue pop(size_t at) {
    if (stack_.size() <= floor()) fail(at, "an opcode takes a value from an empty stack");
    PickleValue value = std::move(stack_.back());
    stack_.pop_back();
    return value;
  }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  PickleValue& top(size_t at) {
    if (stack_.empty()) fail(at, "an opcode needs a value on an empty stack");
    return stack_.back();
  }
  // The values since the latest MARK, which is dropped.
  std::vector<PickleValue> popToMark(size_t at) {
    if (marks_.empty()) fail(at, "no MARK to collect values up to");
    const size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<PickleValue> values(std::make_move_iterator(stack_.begin() + mark),
                                    std::make_move_iterator(stack_.end()));
    stack_.resize(mark);
    return values;
  }

  static PickleValue list(std::vector<PickleValue> items, bool tuple) {
    PickleValue value{std::make_shared<PickleList>(std::move(items))};
    value.isTuple = tuple;
    return value;
  }
  template <typename T>
  T& as(PickleValue& value, size_t at, const char* what) {
    auto* held = std::get_if<T>(&value.value);
    if (!held) fail(at, std::string("expected ") + what);
    return *held;
  }
  PickleList& listOf(PickleValue& value, size_t at) { return *as<std::shared_ptr<PickleList>>(value, at, "a list"); }
  PickleDict& dictOf(PickleValue& value, size_t at) { return *as<std::shared_ptr<PickleDict>>(value, at, "a dict"); }
  int64_t intOf(PickleValue& value, size_t at) { return as<int64_t>(value, at, "an integer"); }
  std::vector<int64_t> intsOf(PickleValue& value, size_t at) {
    std::vector<int64_t> ints;
    for (auto& item : listOf(value, at)) ints.push_back(intOf(item, at));
    return ints;
  }

  void global(std::string module, std::string name, size_t at) {
    const std::string full = module + "." + name;
    if (!callables().count(full) && !storageTypes().count(full)) {
      fail(at, "refers to " + full +
                   ", which is not a tensor, a storage or a plain container (a state dict holds only those); "
                   "firebrand runs no pickled code: save the model's state_dict() instead");
    }
    stack_.push_back({PickleGlobal{full}});
  }

  // BINPERSID: ('storage', storage type, key, location, numel), as torch.save writes it.
  void persistentId(size_t at) {
    PickleValue id = pop(at);
    auto& parts = listOf(id, at);
    if (parts.size() != 5 || as<std::string>(parts[0], at, "'storage'") != "storage") {
      fail(at, "a persistent id other than ('storage', type, key, location, numel)");
    }
    const std::string& type = as<PickleGlobal>(parts[1], at, "a storage type").name;
    const auto dtype = storageTypes().find(type);
    if (dtype == storageTypes().end()) fail(at, type + " is not a storage type");
    stack_.push_back(
        {PickleStorage{as<std::string>(parts[2], at, "a storage key"), dtype->second, intOf(parts[4], at)}});
  }

  void reduce(size_t at) {
    PickleValue arguments = pop(at);
    PickleValue function = pop(at);
    const std::string& name = as<PickleGlobal>(function, at, "a function to call").name;
    auto& args = listOf(arguments, at);
    if (name == "collections.OrderedDict") {
      if (!args.empty()) fail(at, "OrderedDict called with arguments");
      stack_.push_back({std::make_shared<PickleDict>()});
    } else if (name == "torch._utils._rebuild_tensor_v2") {
      if (args.size() < 4) fail(at, "_rebuild_tensor_v2 with " + std::to_string(args.size()) + " arguments");
      PickleTensor tensor{as<PickleStorage>(args[0], at, "a storage"), intOf(args[1], at), intsOf(args[2], at),
                          intsOf(args[3], at)};
      stack_.push_back({std::move(tensor)});
    } else if (storageTypes().count(name)) {
      fail(at, "calls the storage type " + name);
    } else {  // _rebuild_parameter(data, requires_grad, hooks[, state]): the tensor itself
      if (args.empty()) fail(at, name + " without arguments");
      stack_.push_back({as<PickleTensor>(args[0], at, "a tensor")});
    }
  }

  void step(uint8_t opcode, size_t at) {
    switch (opcode) {
      case 0x80:  // PROTO
        if (byte() > 5) fail(at, "pickle protocol above 5");
        break;
      case 0x95:  // FRAME
        take(8);
        break;
      case '}':
        stack_.push_back({std::make_shared<PickleDict>()});
        break;
      case ']':
        stack_.push_back(list({}, false));
        break;
      case ')':
        stack_.push_back(list({}, true));
        break;
      case '(':
        marks_.push_back(stack_.size());
        break;
      case 't':
        stack_.push_back(list(popToMark(at), true));
        break;
      case 'l':
        stack_.push_back(list(popToMark(at), false));
        break;
      case 0x85:
      case 0x86:
      case 0x87: {
        std::vector<PickleValue> items(opcode - 0x84);
        for (auto it = items.rbegin(); it != items.rend(); ++it) *it = pop(at);
        stack_.push_back(list(std::move(items), true));
        break;
      }
      case 'a': {
        PickleValue item = pop(at);
        listOf(top(at), at).push_back(std::move(item));
        break;
      }
      case 'e': {
        auto items = popToMark(at);
        auto& target = listOf(top(at), at);
        for (auto& item : items) target.push_back(std::move(item));
        break;
      }
      case 's': {
        PickleValue value = pop(at);
        PickleValue key = pop(at);
        dictOf(top(at), at).emplace_back(std::move(key), std::move(value));
        break;
      }
      case 'u': {
        auto items = popToMark(at);
        if (items.size() % 2 != 0) fail(at, "SETITEMS with an odd number of values");
        auto& target = dictOf(top(at), at);
        for (size_t i = 0; i < items.size(); i += 2) target.emplace_back(std::move(items[i]), std::move(items[i + 1]));
        break;
      }
      case 'd': {
        auto items = popToMark(at);
        if (items.size() % 2 != 0) fail(at, "DICT with an odd number of values");
        auto dict = std::make_shared<PickleDict>();
        for (size_t i = 0; i < items.size(); i += 2) dict->emplace_back(std::move(items[i]), std::move(items[i + 1]));
        stack_.push_back({dict});
        break;
      }
      case 'q':
        memo_[byte()] = top(at);
        break;
      case 'r':
        memo_[littleEndian(4)] = top(at);
        break;
      case 0x94:  // MEMOIZE
        memo_[memo_.size()] = top(at);
        break;
      case 'h':
      case 'j': {
        const auto found = memo_.find(opcode == 'h' ? byte() : littleEndian(4));
        if (found == memo_.end()) fail(at, "refers to a memo entry never stored");
        stack_.push_back(found->second);
        break;
      }
      case 'X': {  // BINUNICODE
        const size_t length = littleEndian(4);
        stack_.push_back({std::string(take(length), length)});
        break;
      }
      default:
        stepScalar(opcode, at);
    }
  }

  void stepScalar(uint8_t opcode, size_t at) {
    switch (opcode) {
      case 0x8c: {  // SHORT_BINUNICODE
        const size_t length = byte();
        stack_.push_back({std::string(take(length), length)});
        break;
      }
      case 0x8d: {  // BINUNICODE8
        const size_t length = littleEndian(8);
        stack_.push_back({std::string(take(length), length)});
        break;
      }
      case 'K':
        stack_.push_back({static_cast<int64_t>(byte())});
        break;
      case 'M':
        stack_.push_back({static_cast<int64_t>(littleEndian(2))});
        break;
      case 'J':
        stack_.push_back({static_cast<int64_t>(static_cast<int32_t>(littleEndian(4)))});
        break;
      case 0x8a: {  // LONG1: little-endian two's complement of n bytes
        const size_t count = byte();
        if (count > 8) fail(at, "an integer of more than 64 bits");
        uint64_t value = count == 0 ? 0 : littleEndian(count);
        if (count > 0 && count < 8 && (value >> (8 * count - 1)) & 1) value |= ~uint64_t{0} << (8 * count);
        stack_.push_back({static_cast<int64_t>(value)});
        break;
      }
      case 'G': {  // BINFLOAT: big-endian
        uint64_t bits = 0;
        for (const char* data = take(8); data != bytes_.data() + position_; ++data)
          bits = (bits << 8) | static_cast<uint8_t>(*data);
        double value;
        std::memcpy(&value, &bits, sizeof value);
        stack_.push_back({value});
        break;
      }
      case 'N':
        stack_.push_back({});
        break;
      case 0x88:
        stack_.push_back({true});
        break;
      case 0x89:
        stack_.push_back({false});
        break;
      case 'c': {
        std::string module = line();
        global(std::move(module), line(), at);
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        PickleValue name = pop(at);
        PickleValue module = pop(at);
        global(as<std::string>(module, at, "a module name"), as<std::string>(name, at, "a global name"), at);
        break;
      }
      case 'Q':
        persistentId(at);
        break;
      case 'R':
        reduce(at);
        break;
      case 'b': {  // BUILD: only an OrderedDict's attributes (a state dict's _metadata), which are left out
        pop(at);
        dictOf(top(at), at);
        break;
      }
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", opcode);
        fail(at, std::string("opcode ") + hex + " is not one torch.save writes for tensors in plain containers");
      }
    }
  }

  const std::string& bytes_;
  const std::string& origin_;
  size_t position_ = 0;
  std::vector<PickleValue> stack_;
  std::vector<size_t> marks_;
  std::map<uint64_t, PickleValue> memo_;
};

}  // namespace

PickleValue unpickleRestricted(const std::string& bytes, const std::string& origin) {
  return Unpickler(bytes, origin).run();
}

}  // namespace firebrand

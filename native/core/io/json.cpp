#include "core/io/json.h"

#include <cerrno>
#include <cstdlib>

#include "core/errors.h"

namespace firebrand {
namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  Parser(const std::string& text, const std::string& what) : text_(text), what_(what) {}

  JsonValue document() {
    JsonValue value = parse(0);
    skipSpace();
    if (at_ != text_.size()) fail("unexpected text after the document");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw InvalidArgument(what_ + ": " + problem + " at byte " + std::to_string(at_));
  }

  void skipSpace() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r')) {
      ++at_;
    }
  }

  bool consume(char c) {
    skipSpace();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!consume(c)) fail(std::string("expected '") + c + "'");
  }

  bool literal(const char* word) {
    const std::string expected(word);
    if (text_.compare(at_, expected.size(), expected) != 0) return false;
    at_ += expected.size();
    return true;
  }

  JsonValue parse(int depth) {
    if (depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth));
    skipSpace();
    if (at_ >= text_.size()) fail("unexpected end");
    const char c = text_[at_];
    if (c == '{') return {parseObject(depth)};
    if (c == '[') return {parseArray(depth)};
    if (c == '"') return {parseString()};
    if (literal("true")) return {true};
    if (literal("false")) return {false};
    if (literal("null")) return {nullptr};
    return parseNumber();
  }

  std::shared_ptr<JsonObject> parseObject(int depth) {
    expect('{');
    auto object = std::make_shared<JsonObject>();
    if (consume('}')) return object;
    do {
      skipSpace();
      if (at_ >= text_.size() || text_[at_] != '"') fail("expected a string key");
      std::string key = parseString();
      expect(':');
      if (object->count(key)) fail("duplicate key \"" + key + "\"");
      object->emplace(std::move(key), parse(depth + 1));
    } while (consume(','));
    expect('}');
    return object;
  }

  std::shared_ptr<JsonArray> parseArray(int depth) {
    expect('[');
    auto array = std::make_shared<JsonArray>();
    if (consume(']')) return array;
    do {
      array->push_back(parse(depth + 1));
    } while (consume(','));
    expect(']');
    return array;
  }

  std::string parseString() {
    ++at_;  // the opening quote
    std::string out;
    while (at_ < text_.size() && text_[at_] != '"') {
      const unsigned char c = static_cast<unsigned char>(text_[at_++]);
      if (c < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      if (at_ >= text_.size()) fail("unexpected end in a string");
      const char escape = text_[at_++];
      switch (escape) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          out += codePoint();
          break;
        default:
          fail("bad escape in a string");
      }
    }
    if (at_ >= text_.size()) fail("unterminated string");
    ++at_;
    return out;
  }

  // \uXXXX (and surrogate pairs) as UTF-8.
  std::string codePoint() {
    uint32_t code = hex4();
    if (code >= 0xd800 && code < 0xdc00) {
      if (!literal("\\u")) fail("unpaired surrogate");
      const uint32_t low = hex4();
      if (low < 0xdc00 || low >= 0xe000) fail("unpaired surrogate");
      code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
    }
    std::string out;
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xc0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xe0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (code & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (code & 0x3f));
    }
    return out;
  }

  uint32_t hex4() {
    if (at_ + 4 > text_.size()) fail("short \\u escape");
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[at_++];
      value <<= 4;
      if (c >= '0' && c <= '9')
        value |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        value |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        value |= static_cast<uint32_t>(c - 'A' + 10);
      else
        fail("bad \\u escape");
    }
    return value;
  }

  JsonValue parseNumber() {
    const size_t start = at_;
    if (at_ < text_.size() && text_[at_] == '-') ++at_;
    const size_t digits = at_;
    while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
    if (at_ == digits) fail("unexpected character");
    if (text_[digits] == '0' && at_ - digits > 1) fail("leading zero in a number");
    bool integral = true;
    if (at_ < text_.size() && text_[at_] == '.') {
      integral = false;
      const size_t fraction = ++at_;
      while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
      if (at_ == fraction) fail("bad number");
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      integral = false;
      ++at_;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
      const size_t exponent = at_;
      while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
      if (at_ == exponent) fail("bad number");
    }
    const std::string number = text_.substr(start, at_ - start);
    errno = 0;
    if (integral) {
      const long long value = std::strtoll(number.c_str(), nullptr, 10);
      if (errno != ERANGE) return {static_cast<int64_t>(value)};
      errno = 0;
    }
    return {std::strtod(number.c_str(), nullptr)};
  }

  const std::string& text_;
  const std::string& what_;
  size_t at_ = 0;
};

template <typename T>
const T* pointee(const std::variant<std::nullptr_t, bool, int64_t, double, std::string, std::shared_ptr<JsonArray>,
                                    std::shared_ptr<JsonObject>>& value) {
  const auto* shared = std::get_if<std::shared_ptr<T>>(&value);
  return shared ? shared->get() : nullptr;
}

}  // namespace

const JsonObject* JsonValue::object() const { return pointee<JsonObject>(value); }
const JsonArray* JsonValue::array() const { return pointee<JsonArray>(value); }
const std::string* JsonValue::string() const { return std::get_if<std::string>(&value); }
const int64_t* JsonValue::integer() const { return std::get_if<int64_t>(&value); }

JsonValue parseJson(const std::string& text, const std::string& what) { return Parser(text, what).document(); }

}  // namespace firebrand

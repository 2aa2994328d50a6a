#include "core/nn/script_text.h"

#include <sstream>

namespace firebrand {

std::string scriptNumber(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  std::string text = out.str();
  return text.find_first_of(".e") == std::string::npos ? text + ".0" : text;
}

std::string scriptBool(bool value) { return value ? "True" : "False"; }

std::string scriptString(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string scriptList(const std::vector<int64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

std::string scriptInterpolate(const std::string& input, const std::string& size, const std::string& scale, bool nearest,
                              const std::string& alignCorners) {
  const bool scaled = size == "None";
  const std::string out =
      scaled ? "[int(" + input + ".size(-2) * " + scale + "), int(" + input + ".size(-1) * " + scale + ")]" : size;
  const std::string scales = scaled ? scale + ", " + scale : "None, None";
  return nearest ? "torch.upsample_nearest2d(" + input + ", " + out + ", " + scales + ")"
                 : "torch.upsample_bilinear2d(" + input + ", " + out + ", " + alignCorners + ", " + scales + ")";
}

}  // namespace firebrand

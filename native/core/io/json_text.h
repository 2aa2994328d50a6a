// Writing JSON text: strings escaped as the JSON grammar requires.
#pragma once
#include <string>

namespace firebrand {

// "text" with quotes, backslashes and control characters escaped.
std::string jsonString(const std::string& text);

}  // namespace firebrand

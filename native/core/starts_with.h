#pragma once

#include <string_view>

namespace firebrand {

// std::string::starts_with arrives with C++20; libtorch 1.13 builds as C++17.
inline bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace firebrand

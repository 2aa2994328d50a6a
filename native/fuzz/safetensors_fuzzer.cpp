// libFuzzer target: the safetensors reader must turn any bytes into tensors
// or a firebrand::Error, never crash or read out of bounds (ASan watches).
// Built and run by scripts/fuzz-safetensors.sh.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.h"
#include "core/io/safetensors_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    firebrand::parseSafetensors(std::string(reinterpret_cast<const char*>(data), size), "fuzz input");
  } catch (const firebrand::Error&) {
    // A clear error is the expected outcome for malformed input.
  }
  return 0;
}

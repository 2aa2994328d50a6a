// Reads .safetensors files (Hugging Face's format: an 8-byte header length,
// a JSON header naming each tensor's dtype, shape and byte range, then the
// data). Untrusted input: the header length, the JSON, every dtype and shape,
// and every byte range (inside the data, exactly shape x itemsize, not
// overlapping another) are checked before any tensor is read.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "core/io/weights_reader.h"
#include "core/tensor_dict.h"

namespace firebrand {

struct SafetensorsFile {
  TensorDict tensors;
  std::map<std::string, std::string> metadata;  // "__metadata__"
};

SafetensorsFile readSafetensors(const std::string& path);
// The same file's tensors read one at a time, as a model loads them (the header is checked now).
std::unique_ptr<WeightsReader> openSafetensors(const std::string& path);
// The same checks on the bytes of a whole file (for fuzzing and in-memory data).
SafetensorsFile parseSafetensors(const std::string& bytes, const std::string& origin);

}  // namespace firebrand

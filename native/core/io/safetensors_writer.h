// Writes .safetensors files as safetensors.torch.save_file does (tensors by
// dtype size then name, header padded to 8 bytes), atomically: readable by
// Python's safetensors and torch, and by Hugging Face tools.
#pragma once
#include <map>
#include <string>

#include "core/tensor_dict.h"

namespace firebrand {

// The file's bytes; tensors are copied to contiguous CPU memory.
std::string encodeSafetensors(const TensorDict& tensors, const std::map<std::string, std::string>& metadata);
void writeSafetensors(const std::string& path, const TensorDict& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace firebrand

#include "core/io/safetensors_writer.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "core/errors.h"
#include "core/io/atomic_file.h"
#include "core/io/json_text.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

std::string dtypeName(const at::Tensor& tensor, const std::string& name) {
  switch (tensor.scalar_type()) {
    case at::kDouble:
      return "F64";
    case at::kFloat:
      return "F32";
    case at::kHalf:
      return "F16";
    case at::kBFloat16:
      return "BF16";
    case at::kLong:
      return "I64";
    case at::kInt:
      return "I32";
    case at::kShort:
      return "I16";
    case at::kChar:
      return "I8";
    case at::kByte:
      return "U8";
    case at::kBool:
      return "BOOL";
    default:
      throw InvalidArgument("safetensors: tensor '" + name + "' has dtype " + shapeAndDtypeText(tensor) +
                            ", which the format cannot hold");
  }
}

}  // namespace

std::string encodeSafetensors(const TensorDict& tensors, const std::map<std::string, std::string>& metadata) {
  std::vector<std::pair<std::string, at::Tensor>> ordered;
  for (const auto& [name, tensor] : tensors) ordered.emplace_back(name, tensor.detach().to(at::kCPU).contiguous());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.second.element_size() > b.second.element_size(); });
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [key, value] : metadata) {
      header += (first ? "" : ",") + jsonString(key) + ":" + jsonString(value);
      first = false;
    }
    header += "}";
  }
  uint64_t offset = 0;
  for (const auto& [name, tensor] : ordered) {
    const uint64_t bytes = static_cast<uint64_t>(tensor.numel()) * tensor.element_size();
    std::string shape;
    for (int64_t size : tensor.sizes()) shape += (shape.empty() ? "" : ",") + std::to_string(size);
    header += (header.size() > 1 ? "," : "") + jsonString(name) + ":{\"dtype\":\"" + dtypeName(tensor, name) +
              "\",\"shape\":[" + shape + "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i) file[i] = static_cast<char>((static_cast<uint64_t>(header.size()) >> (8 * i)) & 0xff);
  file += header;
  file.reserve(file.size() + offset);
  for (const auto& [name, tensor] : ordered) {
    file.append(static_cast<const char*>(tensor.data_ptr()),
                static_cast<size_t>(tensor.numel()) * tensor.element_size());
  }
  return file;
}

void writeSafetensors(const std::string& path, const TensorDict& tensors,
                      const std::map<std::string, std::string>& metadata) {
  writeFileAtomically(path, encodeSafetensors(tensors, metadata));
}

}  // namespace firebrand

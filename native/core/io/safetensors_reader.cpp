#include "core/io/safetensors_reader.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <vector>

#include "core/errors.h"
#include "core/io/input_file.h"
#include "core/io/json.h"

namespace firebrand {
namespace {

// Headers beyond this are refused (the reference implementation's limit).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

at::ScalarType dtypeOf(const std::string& name, const std::string& where) {
  static const std::map<std::string, at::ScalarType> dtypes = {
      {"F64", at::kDouble}, {"F32", at::kFloat}, {"F16", at::kHalf}, {"BF16", at::kBFloat16}, {"I64", at::kLong},
      {"I32", at::kInt},    {"I16", at::kShort}, {"I8", at::kChar},  {"U8", at::kByte},       {"BOOL", at::kBool}};
  const auto it = dtypes.find(name);
  if (it == dtypes.end()) {
    throw FileError(where + ": dtype '" + name +
                    "' is not supported (F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL)");
  }
  return it->second;
}

struct Entry {
  std::string name;
  at::ScalarType dtype;
  std::vector<int64_t> shape;
  uint64_t begin;
  uint64_t end;
};

std::vector<int64_t> shapeOf(const JsonValue* value, const std::string& where) {
  const JsonArray* dims = value ? value->array() : nullptr;
  if (!dims) throw FileError(where + ": 'shape' must be a list of non-negative integers");
  std::vector<int64_t> shape;
  for (const auto& dim : *dims) {
    const int64_t* size = dim.integer();
    if (!size || *size < 0) throw FileError(where + ": 'shape' must be a list of non-negative integers");
    shape.push_back(*size);
  }
  return shape;
}

// Bytes of a tensor, or nullopt when the count overflows.
bool byteCount(const std::vector<int64_t>& shape, size_t itemSize, uint64_t& bytes) {
  bytes = itemSize;
  for (int64_t size : shape) {
    const auto dim = static_cast<uint64_t>(size);
    if (dim != 0 && bytes > std::numeric_limits<uint64_t>::max() / dim) return false;
    bytes *= dim;
  }
  return true;
}

const JsonValue* member(const JsonObject& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &it->second;
}

// Parses and checks the header against a data section of `dataBytes` bytes.
std::vector<Entry> parseHeader(const std::string& header, uint64_t dataBytes, const std::string& origin,
                               std::map<std::string, std::string>& metadata) {
  const JsonValue document = parseJson(header, origin + ": safetensors header");
  const JsonObject* entries = document.object();
  if (!entries) throw FileError(origin + ": the safetensors header must be a JSON object");
  std::vector<Entry> parsed;
  for (const auto& [name, value] : *entries) {
    const std::string where = origin + ": tensor '" + name + "'";
    const JsonObject* fields = value.object();
    if (name == "__metadata__") {
      if (!fields) throw FileError(origin + ": '__metadata__' must be an object of strings");
      for (const auto& [key, text] : *fields) {
        if (!text.string()) throw FileError(origin + ": '__metadata__' must be an object of strings");
        metadata[key] = *text.string();
      }
      continue;
    }
    if (!fields) throw FileError(where + " must be an object { dtype, shape, data_offsets }");
    for (const auto& [key, unused] : *fields) {
      if (key != "dtype" && key != "shape" && key != "data_offsets")
        throw FileError(where + ": unknown field '" + key + "'");
    }
    const JsonValue* dtype = member(*fields, "dtype");
    if (!dtype || !dtype->string()) throw FileError(where + ": 'dtype' must be a string");
    Entry entry{name, dtypeOf(*dtype->string(), where), shapeOf(member(*fields, "shape"), where), 0, 0};
    const JsonValue* offsets = member(*fields, "data_offsets");
    const JsonArray* range = offsets ? offsets->array() : nullptr;
    if (!range || range->size() != 2 || !(*range)[0].integer() || !(*range)[1].integer() ||
        *(*range)[0].integer() < 0 || *(*range)[1].integer() < *(*range)[0].integer()) {
      throw FileError(where + ": 'data_offsets' must be [begin, end] with 0 <= begin <= end");
    }
    entry.begin = static_cast<uint64_t>(*(*range)[0].integer());
    entry.end = static_cast<uint64_t>(*(*range)[1].integer());
    if (entry.end > dataBytes) {
      throw FileError(where + ": its bytes [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) +
                      ") lie outside the data section of " + std::to_string(dataBytes) + " bytes");
    }
    uint64_t expected = 0;
    if (!byteCount(entry.shape, c10::elementSize(entry.dtype), expected) || expected != entry.end - entry.begin) {
      throw FileError(where + ": " + std::to_string(entry.end - entry.begin) + " bytes do not hold its shape of " +
                      *dtype->string() + " values" + (expected ? " (" + std::to_string(expected) + " bytes)" : ""));
    }
    parsed.push_back(std::move(entry));
  }
  std::vector<const Entry*> byOffset;
  for (const auto& entry : parsed) byOffset.push_back(&entry);
  std::sort(byOffset.begin(), byOffset.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  for (size_t i = 1; i < byOffset.size(); ++i) {
    if (byOffset[i]->begin < byOffset[i - 1]->end) {
      throw FileError(origin + ": tensors '" + byOffset[i - 1]->name + "' and '" + byOffset[i]->name +
                      "' overlap in the data section");
    }
  }
  return parsed;
}

struct Header {
  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;
  uint64_t dataStart = 0;
};

// The checked header of a file of `fileSize` bytes, read through `read(offset, count, destination)`.
template <typename ReadBytes>
Header headerOf(uint64_t fileSize, const std::string& origin, ReadBytes read) {
  if (fileSize < 8)
    throw FileError(origin + ": too short for a safetensors file (" + std::to_string(fileSize) + " bytes)");
  unsigned char prefix[8];
  read(0, 8, prefix);
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | prefix[i];
  if (length > kMaxHeaderBytes || length > fileSize - 8) {
    throw FileError(origin + ": header length " + std::to_string(length) + " does not fit a file of " +
                    std::to_string(fileSize) + " bytes; not a safetensors file, or truncated");
  }
  std::string text(length, '\0');
  read(8, length, text.data());
  Header header;
  header.dataStart = 8 + length;
  header.entries = parseHeader(text, fileSize - header.dataStart, origin, header.metadata);
  return header;
}

// One tensor's values, read through `read`.
template <typename ReadBytes>
at::Tensor tensorOf(const Entry& entry, uint64_t dataStart, const std::string& origin, ReadBytes read) {
  at::Tensor tensor;
  try {
    tensor = at::empty(entry.shape, at::TensorOptions().dtype(entry.dtype));
  } catch (const c10::Error& error) {  // a shape whose element count overflows
    throw FileError(origin + ": tensor '" + entry.name + "' has an impossible shape (" +
                    error.what_without_backtrace() + ")");
  }
  if (entry.end > entry.begin) read(dataStart + entry.begin, entry.end - entry.begin, tensor.data_ptr());
  return tensor;
}

template <typename ReadBytes>
SafetensorsFile load(uint64_t fileSize, const std::string& origin, ReadBytes read) {
  Header header = headerOf(fileSize, origin, read);
  SafetensorsFile file;
  file.metadata = std::move(header.metadata);
  for (const Entry& entry : header.entries)
    file.tensors.emplace(entry.name, tensorOf(entry, header.dataStart, origin, read));
  return file;
}

// Reads `count` bytes at `offset` of an open file.
class FileBytes {
 public:
  explicit FileBytes(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    if (!in_) throw FileError(path + ": cannot open safetensors file (" + std::strerror(errno) + ")");
    in_.seekg(0, std::ios::end);
    size_ = static_cast<uint64_t>(in_.tellg());
  }
  uint64_t size() const { return size_; }
  void operator()(uint64_t offset, uint64_t count, void* destination) {
    in_.seekg(static_cast<std::streamoff>(offset));
    if (!in_.read(static_cast<char*>(destination), static_cast<std::streamsize>(count))) {
      throw FileError(path_ + ": cannot read " + std::to_string(count) + " bytes at " + std::to_string(offset));
    }
  }

 private:
  std::string path_;
  std::ifstream in_;
  uint64_t size_ = 0;
};

class SafetensorsWeights : public WeightsReader {
 public:
  explicit SafetensorsWeights(const std::string& path) : path_(path), bytes_(path) {
    Header header = headerOf(bytes_.size(), path, std::ref(bytes_));
    dataStart_ = header.dataStart;
    for (auto& entry : header.entries) {
      shapes_.emplace(entry.name, entry.shape);
      entries_.emplace(entry.name, std::move(entry));
    }
  }
  const WeightShapes& shapes() const override { return shapes_; }
  at::Tensor read(const std::string& name) override {
    return tensorOf(entryNamed(name), dataStart_, path_, std::ref(bytes_));
  }
  void copyInto(const std::string& name, at::Tensor& target) override {
    const Entry& entry = entryNamed(name);
    const bool sameLayout = target.device().is_cpu() && target.is_contiguous() && target.scalar_type() == entry.dtype &&
                            target.sizes().equals(entry.shape) &&
                            static_cast<uint64_t>(target.nbytes()) == entry.end - entry.begin;
    if (!sameLayout) return WeightsReader::copyInto(name, target);
    if (entry.end > entry.begin) bytes_(dataStart_ + entry.begin, entry.end - entry.begin, target.data_ptr());
    target.unsafeGetTensorImpl()->bump_version();  // as copy_ would: what caches the weights sees them change
  }

 private:
  const Entry& entryNamed(const std::string& name) const {
    const auto it = entries_.find(name);
    if (it == entries_.end()) throw InvalidArgument("internal: no weight '" + name + "' in " + path_);
    return it->second;
  }

  std::string path_;
  FileBytes bytes_;
  uint64_t dataStart_ = 0;
  WeightShapes shapes_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace

SafetensorsFile parseSafetensors(const std::string& bytes, const std::string& origin) {
  return load(bytes.size(), origin, [&](uint64_t offset, uint64_t count, void* destination) {
    std::memcpy(destination, bytes.data() + offset, count);
  });
}

SafetensorsFile readSafetensors(const std::string& path) {
  checkInputFile(path, "safetensors file");
  FileBytes bytes(path);
  return load(bytes.size(), path, std::ref(bytes));
}

std::unique_ptr<WeightsReader> openSafetensors(const std::string& path) {
  checkInputFile(path, "safetensors file");
  return std::make_unique<SafetensorsWeights>(path);
}

}  // namespace firebrand

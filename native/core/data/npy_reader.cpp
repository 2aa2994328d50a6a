#include "core/data/npy_reader.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <regex>
#include <vector>

#include "core/errors.h"
#include "core/io/input_file.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

struct NpyType {
  at::ScalarType dtype;
  bool bigEndian;
};

NpyType parseDescr(const std::string& descr, const std::string& path) {
  static const std::vector<std::pair<std::string, at::ScalarType>> kTypes = {
      {"f4", at::kFloat}, {"f8", at::kDouble}, {"f2", at::kHalf}, {"i8", at::kLong}, {"i4", at::kInt},
      {"i2", at::kShort}, {"i1", at::kChar},   {"u1", at::kByte}, {"b1", at::kBool}};
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=')) {
    for (const auto& [code, dtype] : kTypes) {
      if (descr.compare(1, 2, code) == 0) return {dtype, descr[0] == '>'};
    }
  }
  throw FileError(path + ": unsupported .npy dtype '" + descr +
                  "' (supported: float16/32/64, int8/16/32/64, uint8, bool)");
}

std::string headerField(const std::string& header, const std::string& key, const std::string& pattern,
                        const std::string& path) {
  std::smatch match;
  if (!std::regex_search(header, match, std::regex("'" + key + "'\\s*:\\s*" + pattern))) {
    throw FileError(path + ": .npy header has no readable '" + key + "' field: " + header);
  }
  return match[1];
}

}  // namespace

at::Tensor readNpy(const std::string& path) {
  checkInputFile(path, ".npy file");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw FileError(path + ": cannot open .npy file (" + std::strerror(errno) + ")");
  return parseNpy(file, path);
}

at::Tensor parseNpy(std::istream& file, const std::string& path) {
  char magic[8];
  if (!file.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    throw FileError(path + ": not a .npy file (it does not start with \\x93NUMPY)");
  }
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t headerLength = 0;
  unsigned char lengthBytes[4] = {0, 0, 0, 0};
  const int lengthSize = major == 1 ? 2 : 4;
  if (!file.read(reinterpret_cast<char*>(lengthBytes), lengthSize)) throw FileError(path + ": truncated .npy header");
  for (int i = lengthSize - 1; i >= 0; --i) headerLength = (headerLength << 8) | lengthBytes[i];
  std::string header(headerLength, '\0');
  if (!file.read(header.data(), headerLength)) throw FileError(path + ": truncated .npy header");

  const NpyType type = parseDescr(headerField(header, "descr", "'([^']*)'", path), path);
  const bool fortranOrder = headerField(header, "fortran_order", "(True|False)", path) == "True";
  std::vector<int64_t> shape;
  const std::string dims = headerField(header, "shape", "\\(([^)]*)\\)", path);
  const std::regex number("\\d+");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), number); it != std::sregex_iterator(); ++it) {
    // Past int64 (a corrupt header): the size check below refuses it by name.
    const std::string digits = it->str();
    shape.push_back(digits.size() > 18 ? std::numeric_limits<int64_t>::max() : std::stoll(digits));
  }

  // Fortran order is the transpose's C order: read reversed, then permute back.
  std::vector<int64_t> storedShape = shape;
  if (fortranOrder) std::reverse(storedShape.begin(), storedShape.end());
  // Before allocating: a header claiming more data than the file holds is an error naming the file.
  uint64_t claimed = c10::elementSize(type.dtype);
  for (const int64_t size : shape) {
    if (__builtin_mul_overflow(claimed, static_cast<uint64_t>(size), &claimed)) claimed = UINT64_MAX;
  }
  const std::streampos dataStart = file.tellg();
  if (dataStart != std::streampos(-1) && file.seekg(0, std::ios::end)) {
    const auto available = static_cast<uint64_t>(file.tellg() - dataStart);
    file.seekg(dataStart);
    if (claimed > available) {
      throw FileError(path + ": truncated .npy data: its header claims shape (" + dims + ") of " +
                      dtypeText(type.dtype) + ", " + std::to_string(claimed) + " bytes, but only " +
                      std::to_string(available) + " bytes follow it");
    }
  }
  at::Tensor tensor = at::empty(storedShape, at::TensorOptions().dtype(type.dtype));
  const size_t bytes = static_cast<size_t>(tensor.numel()) * tensor.element_size();
  if (!file.read(static_cast<char*>(tensor.data_ptr()), static_cast<std::streamsize>(bytes))) {
    throw FileError(path + ": truncated .npy data (expected " + std::to_string(bytes) + " bytes for shape " + dims +
                    ")");
  }
  if (type.bigEndian && tensor.element_size() > 1) {
    auto* data = static_cast<unsigned char*>(tensor.data_ptr());
    const size_t size = tensor.element_size();
    for (int64_t i = 0; i < tensor.numel(); ++i) std::reverse(data + i * size, data + (i + 1) * size);
  }
  if (fortranOrder && shape.size() > 1) {
    std::vector<int64_t> order(shape.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(order.size() - 1 - i);
    tensor = tensor.permute(order).contiguous();
  }
  return tensor;
}

}  // namespace firebrand

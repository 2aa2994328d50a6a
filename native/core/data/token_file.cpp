#include "core/data/token_file.h"

#include <ATen/ATen.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "core/errors.h"

namespace firebrand {
namespace {

// Little-endian bytes as an unsigned or signed integer of `width` bytes.
int64_t littleEndian(const unsigned char* bytes, size_t width, bool isSigned) {
  uint64_t value = 0;
  for (size_t i = 0; i < width; ++i) value |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  if (isSigned && width < 8 && (value >> (8 * width - 1)) != 0) value |= ~uint64_t{0} << (8 * width);
  return static_cast<int64_t>(value);
}

}  // namespace

at::Tensor readTokenFile(const std::string& path, const std::string& dtype) {
  const size_t width = dtype == "uint16" ? 2 : dtype == "int32" ? 4 : dtype == "int64" ? 8 : 0;
  if (width == 0)
    throw InvalidArgument("fromTokenFile.dtype: got '" + dtype + "', expected one of 'uint16', 'int32', 'int64'");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw FileError(path + ": cannot open the token file");
  const auto size = static_cast<size_t>(in.tellg());
  if (size % width != 0) {
    throw FileError(path + ": holds " + std::to_string(size) + " bytes, not a whole number of " + dtype + " tokens (" +
                    std::to_string(width) + " bytes each); is dtype the one it was written with?");
  }
  std::vector<unsigned char> bytes(size);
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
    throw FileError(path + ": cannot read the token file");
  at::Tensor ids = at::empty({static_cast<int64_t>(size / width)}, at::kLong);
  int64_t* out = ids.data_ptr<int64_t>();
  for (size_t i = 0; i < size / width; ++i) out[i] = littleEndian(bytes.data() + i * width, width, dtype != "uint16");
  return ids;
}

TensorDataset tokenFileWindows(const std::string& path, const std::string& dtype, const TokenWindowOptions& options) {
  checkTokenWindowOptions(options);
  return tokenWindows({readTokenFile(path, dtype)}, options);
}

}  // namespace firebrand

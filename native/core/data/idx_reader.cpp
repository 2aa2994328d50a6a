#include "core/data/idx_reader.h"

#include <ATen/ATen.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "core/errors.h"
#include "core/io/input_file.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

struct GzFileCloser {
  void operator()(gzFile file) const { gzclose(file); }
};
using GzFile = std::unique_ptr<std::remove_pointer_t<gzFile>, GzFileCloser>;

// IDX type codes (third byte of the magic number).
at::ScalarType idxScalarType(unsigned char code, const std::string& path) {
  switch (code) {
    case 0x08:
      return at::kByte;
    case 0x09:
      return at::kChar;
    case 0x0B:
      return at::kShort;
    case 0x0C:
      return at::kInt;
    case 0x0D:
      return at::kFloat;
    case 0x0E:
      return at::kDouble;
    default: {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", code);
      throw FileError(path + ": unknown IDX element type " + hex +
                      " (expected 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32 or 0x0E float64)");
    }
  }
}

void readExactly(gzFile file, void* buffer, size_t bytes, const std::string& path, const char* what) {
  // gzread takes an unsigned count; read in chunks well below its limit.
  auto* cursor = static_cast<unsigned char*>(buffer);
  size_t remaining = bytes;
  while (remaining > 0) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(remaining, 1u << 30));
    const int got = gzread(file, cursor, chunk);
    if (got <= 0) {
      int status = 0;
      const char* zlibMessage = gzerror(file, &status);
      throw FileError(path + ": truncated or corrupt IDX file while reading its " + what + " (read " +
                      std::to_string(bytes - remaining) + " of " + std::to_string(bytes) + " bytes" +
                      (status != Z_OK && status != Z_BUF_ERROR ? std::string("; zlib: ") + zlibMessage : "") + ")");
    }
    cursor += got;
    remaining -= static_cast<size_t>(got);
  }
}

// Before allocating: the header's dimensions must describe no more data than
// the file can hold (deflate expands at most ~1032x), so that a corrupt or
// hostile header is an error naming the file, not an allocation failure.
void checkDataFits(const std::vector<int64_t>& shape, size_t elementSize, uint64_t fileSize, bool uncompressed,
                   const std::string& path) {
  constexpr uint64_t kMaxDeflateRatio = 1032;
  const uint64_t limit = uncompressed ? fileSize : fileSize * kMaxDeflateRatio;
  uint64_t bytes = elementSize;
  for (const int64_t size : shape) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(size), &bytes)) bytes = UINT64_MAX;
  }
  if (bytes > limit) {
    throw FileError(path + ": its header claims an array of shape " + shapeText(shape) + " (" + std::to_string(bytes) +
                    " bytes), more than the file's " + std::to_string(fileSize) + " bytes can hold" +
                    (uncompressed ? "" : " compressed") + " (corrupt or not an IDX file)");
  }
}

}  // namespace

at::Tensor readIdx(const std::string& path) {
  const uint64_t fileSize = checkInputFile(path, "IDX file");
  if (FILE* probe = std::fopen(path.c_str(), "rb")) {
    std::fclose(probe);
  } else {
    throw FileError(path + ": cannot open IDX file (" + std::strerror(errno) + ")");
  }
  // gzread reads uncompressed files unchanged, so one path serves .gz and plain files.
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) throw FileError(path + ": cannot open IDX file");

  unsigned char magic[4];
  readExactly(file.get(), magic, 4, path, "header");
  if (magic[0] != 0 || magic[1] != 0 || magic[3] == 0) {
    throw FileError(path + ": not an IDX file (its first bytes are not 00 00 <type> <rank>)");
  }
  const at::ScalarType dtype = idxScalarType(magic[2], path);
  const int rank = magic[3];

  std::vector<int64_t> shape(rank);
  for (int axis = 0; axis < rank; ++axis) {
    unsigned char size[4];
    readExactly(file.get(), size, 4, path, "header");
    shape[axis] = (int64_t{size[0]} << 24) | (int64_t{size[1]} << 16) | (int64_t{size[2]} << 8) | size[3];
  }

  checkDataFits(shape, c10::elementSize(dtype), fileSize, gzdirect(file.get()) != 0, path);
  at::Tensor tensor = at::empty(shape, at::TensorOptions().dtype(dtype));
  const size_t elementSize = tensor.element_size();
  readExactly(file.get(), tensor.data_ptr(), tensor.numel() * elementSize, path, "data");

  // IDX stores multi-byte values big-endian.
  if (elementSize > 1) {
    auto* bytes = static_cast<unsigned char*>(tensor.data_ptr());
    for (int64_t i = 0; i < tensor.numel(); ++i) {
      std::reverse(bytes + i * elementSize, bytes + (i + 1) * elementSize);
    }
  }
  return tensor;
}

}  // namespace firebrand

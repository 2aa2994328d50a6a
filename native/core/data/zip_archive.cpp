#include "core/data/zip_archive.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/errors.h"
#include "core/io/input_file.h"

namespace firebrand {
namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64EndLocator = 0x07064b50;
constexpr uint32_t kZip64End = 0x06064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kZip64Marker = 0xffffffff;

// Little-endian fields of a record held in a string.
uint64_t field(const std::string& bytes, size_t offset, size_t width) {
  uint64_t value = 0;
  for (size_t i = width; i-- > 0;) value = (value << 8) | static_cast<unsigned char>(bytes[offset + i]);
  return value;
}

// The ZIP64 extra field among a directory entry's extra fields (`length` bytes from `extra`): the 8-byte
// values of the member's fields marked 0xffffffff, in order.
void readZip64Sizes(const std::string& directory, size_t extra, size_t length, ZipArchive::Member& member,
                    const std::string& path) {
  for (const size_t end = extra + length; extra + 4 <= end;) {
    const uint64_t id = field(directory, extra, 2);
    const size_t size = field(directory, extra + 2, 2);
    if (extra + 4 + size > end) break;
    if (id == 1) {
      size_t value = extra + 4;
      for (uint64_t* target : {&member.size, &member.compressedSize, &member.localHeaderOffset}) {
        if (*target != kZip64Marker) continue;
        if (value + 8 > extra + 4 + size) throw FileError(path + ": corrupt ZIP64 field of " + member.name);
        *target = field(directory, value, 8);
        value += 8;
      }
    }
    extra += 4 + size;
  }
}

}  // namespace

ZipArchive::ZipArchive(std::string path) : path_(std::move(path)), file_(path_, std::ios::binary) {
  checkInputFile(path_, "zip archive (.npz)");
  if (!file_) throw FileError(path_ + ": cannot open archive (" + std::strerror(errno) + ")");
  file_.seekg(0, std::ios::end);
  fileSize_ = static_cast<uint64_t>(file_.tellg());
  readCentralDirectory();
}

std::string ZipArchive::bytesAt(uint64_t offset, uint64_t count, const char* what) {
  if (offset > fileSize_ || count > fileSize_ - offset) {
    throw FileError(path_ + ": truncated or corrupt ZIP archive: the " + what + " at byte " + std::to_string(offset) +
                    " (" + std::to_string(count) + " bytes) lies outside the file of " + std::to_string(fileSize_) +
                    " bytes");
  }
  std::string bytes(count, '\0');
  file_.clear();
  file_.seekg(static_cast<std::streamoff>(offset));
  if (!file_.read(bytes.data(), static_cast<std::streamsize>(count))) {
    throw FileError(path_ + ": cannot read the " + std::string(what));
  }
  return bytes;
}

void ZipArchive::readCentralDirectory() {
  // The end record is the last 22 bytes, before a comment of up to 65535 bytes.
  const uint64_t tailSize = std::min<uint64_t>(fileSize_, 22 + 65535);
  const std::string tail = bytesAt(fileSize_ - tailSize, tailSize, "end of the archive");
  size_t end = std::string::npos;
  for (size_t at = tail.size() >= 22 ? tail.size() - 22 + 1 : 0; at-- > 0;) {
    if (field(tail, at, 4) == kEndOfDirectory) {
      end = at;
      break;
    }
  }
  if (end == std::string::npos) throw FileError(path_ + ": not a ZIP archive (no end-of-directory record)");
  uint64_t count = field(tail, end + 10, 2);
  uint64_t directorySize = field(tail, end + 12, 4);
  uint64_t directoryOffset = field(tail, end + 16, 4);
  const uint64_t endOffset = fileSize_ - tailSize + end;
  if (directoryOffset == kZip64Marker || count == 0xffff) {
    if (endOffset < 20) throw FileError(path_ + ": corrupt ZIP64 archive (no locator)");
    const std::string locator = bytesAt(endOffset - 20, 20, "ZIP64 locator");
    if (field(locator, 0, 4) != kZip64EndLocator) throw FileError(path_ + ": corrupt ZIP64 archive (bad locator)");
    const std::string record = bytesAt(field(locator, 8, 8), 56, "ZIP64 end record");
    if (field(record, 0, 4) != kZip64End) throw FileError(path_ + ": corrupt ZIP64 archive (bad end record)");
    count = field(record, 32, 8);
    directorySize = field(record, 40, 8);
    directoryOffset = field(record, 48, 8);
  }
  const std::string directory = bytesAt(directoryOffset, directorySize, "central directory");
  size_t at = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (at + 46 > directory.size() || field(directory, at, 4) != kDirectoryEntry) {
      throw FileError(path_ + ": corrupt ZIP central directory at entry " + std::to_string(i));
    }
    Member member;
    member.method = static_cast<uint16_t>(field(directory, at + 10, 2));
    member.compressedSize = field(directory, at + 20, 4);
    member.size = field(directory, at + 24, 4);
    const size_t nameLength = field(directory, at + 28, 2);
    const size_t extraLength = field(directory, at + 30, 2);
    const size_t commentLength = field(directory, at + 32, 2);
    member.localHeaderOffset = field(directory, at + 42, 4);
    if (at + 46 + nameLength + extraLength + commentLength > directory.size()) {
      throw FileError(path_ + ": corrupt ZIP central directory at entry " + std::to_string(i));
    }
    member.name = directory.substr(at + 46, nameLength);
    readZip64Sizes(directory, at + 46 + nameLength, extraLength, member, path_);
    members_.push_back(member);
    at += 46 + nameLength + extraLength + commentLength;
  }
}

std::string ZipArchive::read(const Member& member) {
  const std::string local = bytesAt(member.localHeaderOffset, 30, "local header");
  if (field(local, 0, 4) != kLocalHeader) throw FileError(path_ + ": corrupt ZIP local header of " + member.name);
  const uint64_t dataOffset = member.localHeaderOffset + 30 + field(local, 26, 2) + field(local, 28, 2);
  std::string stored = bytesAt(dataOffset, member.compressedSize, "data");
  if (member.method == 0) {
    if (member.size != member.compressedSize) throw FileError(path_ + ": corrupt ZIP sizes of " + member.name);
    return stored;
  }
  if (member.method != 8) {
    throw FileError(path_ + ": member " + member.name + " uses ZIP method " + std::to_string(member.method) +
                    " (supported: stored, deflate)");
  }
  // Deflated: the declared size bounds the output (no decompression bomb beyond it).
  if (member.size > std::numeric_limits<uInt>::max() || stored.size() > std::numeric_limits<uInt>::max()) {
    throw FileError(path_ + ": member " + member.name + " is too large to inflate at once");
  }
  std::string inflated(member.size, '\0');
  z_stream stream{};
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) throw FileError(path_ + ": cannot start zlib");
  stream.next_in = reinterpret_cast<Bytef*>(stored.data());
  stream.avail_in = static_cast<uInt>(stored.size());
  stream.next_out = reinterpret_cast<Bytef*>(inflated.data());
  stream.avail_out = static_cast<uInt>(inflated.size());
  const int status = inflate(&stream, Z_FINISH);
  const uint64_t produced = stream.total_out;
  inflateEnd(&stream);
  if (status != Z_STREAM_END || produced != member.size) {
    throw FileError(path_ + ": corrupt deflated data in member " + member.name);
  }
  return inflated;
}

}  // namespace firebrand

// Reads the members of a ZIP archive (what numpy.savez and savez_compressed
// write): stored or deflated, with ZIP64 sizes. Every offset and size read
// from the file is checked against the file before use.
#pragma once
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace firebrand {

class ZipArchive {
 public:
  struct Member {
    std::string name;
    uint16_t method = 0;  // 0 stored, 8 deflated
    uint64_t compressedSize = 0;
    uint64_t size = 0;
    uint64_t localHeaderOffset = 0;
  };

  explicit ZipArchive(std::string path);

  const std::vector<Member>& members() const { return members_; }
  // The member's uncompressed bytes.
  std::string read(const Member& member);

 private:
  void readCentralDirectory();
  std::string bytesAt(uint64_t offset, uint64_t count, const char* what);

  std::string path_;
  std::ifstream file_;
  uint64_t fileSize_ = 0;
  std::vector<Member> members_;
};

}  // namespace firebrand

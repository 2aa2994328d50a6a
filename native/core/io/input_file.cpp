#include "core/io/input_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/errors.h"

namespace firebrand {

uint64_t checkInputFile(const std::string& path, const std::string& kind) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    throw FileError(path + ": cannot open " + kind + " (" + std::strerror(errno) + ")");
  }
  if (S_ISDIR(status.st_mode)) throw FileError(path + ": is a directory, expected a " + kind);
  return static_cast<uint64_t>(status.st_size);
}

}  // namespace firebrand

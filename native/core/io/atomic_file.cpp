#include "core/io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/errors.h"

namespace firebrand {
namespace {

std::string parentOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

[[noreturn]] void fail(const std::string& path, const char* what) {
  throw FileError(path + ": cannot " + what + " (" + std::strerror(errno) + ")");
}

// An open file descriptor, closed on every path out.
class Descriptor {
 public:
  Descriptor(const std::string& path, int flags, mode_t mode = 0)
      : fd_(::open(path.c_str(), flags | O_CLOEXEC, mode)) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

void syncFile(const std::string& path) {
  Descriptor file(path, O_RDONLY);
  if (file.get() < 0) fail(path, "open for fsync");
  if (::fsync(file.get()) != 0) fail(path, "fsync");
}

void syncFolder(const std::string& path) {
  Descriptor folder(path, O_RDONLY | O_DIRECTORY);
  if (folder.get() < 0) fail(path, "open folder for fsync");
  if (::fsync(folder.get()) != 0) fail(path, "fsync folder");
}

void writeFileAtomically(const std::string& path, const std::string& bytes) {
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  {
    Descriptor file(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (file.get() < 0) fail(temporary, "create");
    size_t written = 0;
    while (written < bytes.size()) {
      const ssize_t count = ::write(file.get(), bytes.data() + written, bytes.size() - written);
      if (count < 0 && errno == EINTR) continue;
      if (count <= 0) {
        ::unlink(temporary.c_str());
        fail(temporary, "write");
      }
      written += static_cast<size_t>(count);
    }
    if (::fsync(file.get()) != 0) {
      ::unlink(temporary.c_str());
      fail(temporary, "fsync");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    ::unlink(temporary.c_str());
    fail(path, "rename the written file into place");
  }
  syncFolder(parentOf(path));
}

}  // namespace firebrand

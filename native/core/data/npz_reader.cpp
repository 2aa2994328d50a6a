#include "core/data/npz_reader.h"

#include <sstream>

#include "core/data/npy_reader.h"
#include "core/data/zip_archive.h"
#include "core/errors.h"

namespace firebrand {

TensorDict readNpz(const std::string& path) {
  ZipArchive archive(path);
  TensorDict arrays;
  for (const auto& member : archive.members()) {
    const std::string suffix = ".npy";
    if (member.name.size() <= suffix.size() ||
        member.name.compare(member.name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    std::istringstream bytes(archive.read(member));
    arrays.emplace(member.name.substr(0, member.name.size() - suffix.size()),
                   parseNpy(bytes, path + ":" + member.name));
  }
  if (arrays.empty()) throw FileError(path + ": the archive holds no .npy arrays");
  return arrays;
}

}  // namespace firebrand

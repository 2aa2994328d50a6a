// The check every file reader makes before opening its file: a missing path
// or a directory is an error naming the path and the kind of file expected,
// never a reader's confused "not a .npy file" or "cannot read 8 bytes at 0".
#pragma once
#include <cstdint>
#include <string>

namespace firebrand {

// Throws FileError unless `path` is a file (not a directory) that exists;
// `kind` names what the caller reads ("safetensors file"). Returns its size in bytes.
uint64_t checkInputFile(const std::string& path, const std::string& kind);

}  // namespace firebrand

// Durable, all-or-nothing writes: data goes to a temporary name, is fsynced,
// then renamed over the target, and the folder is fsynced so the rename
// itself survives a crash. A reader sees the old file or the new, never half.
#pragma once
#include <string>

namespace firebrand {

void writeFileAtomically(const std::string& path, const std::string& bytes);
// Flushes a folder's entries (renames, new files) to disk.
void syncFolder(const std::string& path);
// Flushes a written file's data to disk.
void syncFile(const std::string& path);

}  // namespace firebrand

// Reads the tensors of a torch.save zip file (.pt/.pth: data.pkl plus one
// record per storage), as torch.load(weights_only=True) would, without running
// any of its pickle (restricted_unpickler.h). A state dict gives its tensors
// by name; dicts nested in the file (a checkpoint's {"state_dict": ...}) give
// theirs under "outer.inner" names; other values (numbers, strings) are left out.
#pragma once
#include <memory>
#include <string>

#include "core/io/weights_reader.h"

namespace firebrand {

// The file's tensors, read one storage at a time (the pickle and every view are checked now).
std::unique_ptr<WeightsReader> openTorchSave(const std::string& path);

}  // namespace firebrand

// Reads the tensors of a torch.save zip file (.pt/.pth: data.pkl plus one
// record per storage), as torch.load(weights_only=True) would, without running
// any of its pickle (restricted_unpickler.h). A state dict gives its tensors
// by name; dicts nested in the file (a checkpoint's {"state_dict": ...}) give
// theirs under "outer.inner" names; other values (numbers, strings) are left out.
#pragma once
#include <string>

#include "core/tensor_dict.h"

namespace firebrand {

TensorDict readTorchSave(const std::string& path);

}  // namespace firebrand

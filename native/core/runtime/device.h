// Parses the device a caller names and checks it exists:
// 'auto' (CUDA, else MPS, else CPU), 'cpu', 'cuda', 'cuda:<index>', 'mps'.
#pragma once
#include <c10/core/Device.h>

#include <string>

namespace firebrand {

c10::Device parseDevice(const std::string& name);

}  // namespace firebrand

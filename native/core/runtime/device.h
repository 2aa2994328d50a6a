// Parses the device a caller names ("cpu", "cuda", "cuda:1") and checks it exists.
#pragma once
#include <c10/core/Device.h>

#include <string>

namespace firebrand {

c10::Device parseDevice(const std::string& name);

}  // namespace firebrand

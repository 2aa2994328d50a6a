#include "core/runtime/device.h"

#include <torch/cuda.h>

#include "core/errors.h"

namespace firebrand {

c10::Device parseDevice(const std::string& name) {
  const bool cuda = name == "cuda" || name.rfind("cuda:", 0) == 0;
  if (name != "cpu" && !cuda) {
    throw InvalidArgument("device: expected 'cpu', 'cuda' or 'cuda:<index>', got '" + name + "'");
  }
  c10::Device device(c10::kCPU);
  try {
    device = c10::Device(name);
  } catch (const c10::Error&) {
    throw InvalidArgument("device: cannot parse '" + name + "'; expected 'cpu', 'cuda' or 'cuda:<index>'");
  }
  if (cuda) {
    const int64_t count = static_cast<int64_t>(torch::cuda::device_count());
    if (count == 0) {
      throw InvalidArgument("device '" + name + "': no CUDA device is available to this libtorch (" +
                            (torch::cuda::is_available() ? "no GPU visible" : "it was built without CUDA or no GPU is visible") +
                            "); use device 'cpu'");
    }
    if (device.has_index() && device.index() >= count) {
      throw InvalidArgument("device '" + name + "': only " + std::to_string(count) + " CUDA device(s) visible");
    }
  }
  return device;
}

}  // namespace firebrand

#include "core/runtime/device.h"

#include <ATen/Context.h>
#include <torch/cuda.h>

#include "core/errors.h"

namespace firebrand {
namespace {

constexpr const char* kExpected = "'auto', 'cpu', 'cuda', 'cuda:<index>' or 'mps'";

c10::Device checkedCuda(const std::string& name) {
  c10::Device device(c10::kCPU);
  try {
    device = c10::Device(name);
  } catch (const c10::Error&) {
    throw InvalidArgument("device: cannot parse '" + name + "'; expected " + kExpected);
  }
  const int64_t count = static_cast<int64_t>(torch::cuda::device_count());
  if (count == 0) {
    throw InvalidArgument(
        "device '" + name + "': no CUDA device is available to this libtorch (" +
        (torch::cuda::is_available() ? "no GPU visible" : "it was built without CUDA or no GPU is visible") +
        "); use device 'cpu' or 'auto'");
  }
  if (device.has_index() && device.index() >= count) {
    throw InvalidArgument("device '" + name + "': only " + std::to_string(count) + " CUDA device(s) visible");
  }
  return device;
}

}  // namespace

c10::Device parseDevice(const std::string& name) {
  if (name == "auto") {
    if (torch::cuda::is_available()) return c10::Device(c10::kCUDA, 0);
    if (at::hasMPS()) return c10::Device(c10::kMPS);
    return c10::Device(c10::kCPU);
  }
  if (name == "cpu") return c10::Device(c10::kCPU);
  if (name == "cuda" || name.rfind("cuda:", 0) == 0) return checkedCuda(name);
  if (name == "mps") {
    if (!at::hasMPS()) {
      throw InvalidArgument(
          "device 'mps': this libtorch has no MPS backend (Apple silicon with macOS only); "
          "use device 'cpu' or 'auto'");
    }
    return c10::Device(c10::kMPS);
  }
  throw InvalidArgument("device: expected " + std::string(kExpected) + ", got '" + name + "'");
}

}  // namespace firebrand

#include "core/runtime/kernel_settings.h"

#include <algorithm>
#include <cstdlib>

#include "core/errors.h"

namespace firebrand {

const std::vector<KernelSetting>& kernelSettings() {
  static const std::vector<KernelSetting> settings = {
      // 1: every kernel with an AVX2 or AVX-512 version takes its portable one; avx2: no AVX-512 ones.
      {"FIREBRAND_CPU_BASELINE", {"0", "1", "avx2"}, "0"},
      // 0: a decoder layer's ops run one by one while generating, not as one native call (for comparisons).
      {"FIREBRAND_DECODE_KERNELS", {"0", "1"}, "1"},
      // 0: float32 products of frozen linear layers run libtorch's BLAS, not oneDNN's sgemm (for comparisons).
      {"FIREBRAND_ONEDNN_SGEMM", {"0", "1"}, "1"},
      // 0: inference convolutions run libtorch's prepacked oneDNN op, not a oneDNN 3 primitive of firebrand's.
      {"FIREBRAND_ONEDNN_CONVOLUTION", {"0", "1"}, "1"},
      // 0: predict's linear layers run oneDNN's sgemm (FIREBRAND_ONEDNN_SGEMM), not a packed oneDNN 3 matmul.
      {"FIREBRAND_ONEDNN_MATMUL", {"0", "1"}, "1"},
  };
  return settings;
}

std::string kernelSetting(const std::string& name) {
  const auto& settings = kernelSettings();
  const auto setting =
      std::find_if(settings.begin(), settings.end(), [&](const KernelSetting& known) { return known.name == name; });
  if (setting == settings.end()) throw InvalidState("firebrand bug: no kernel setting " + name);
  const char* value = std::getenv(name.c_str());
  if (value == nullptr || std::find(setting->values.begin(), setting->values.end(), value) == setting->values.end())
    return setting->defaultValue;
  return value;
}

}  // namespace firebrand

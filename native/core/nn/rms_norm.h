// RMS normalisation, as torch.nn.functional.rms_norm (PyTorch 2.4): the math
// both F.rmsNorm (an op row) and nn.RMSNorm (a layer row) run and export.
#pragma once
#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <vector>

namespace firebrand {

// x / sqrt(mean(x², the trailing dims of `normalizedShape`) + eps) * weight. Unset eps is the input
// dtype's machine epsilon (torch.finfo(dtype).eps). Input whose trailing sizes are not
// `normalizedShape` is refused, as PyTorch refuses it; `owner` names the caller in that error.
at::Tensor rmsNorm(const at::Tensor& input, const std::vector<int64_t>& normalizedShape,
                   const c10::optional<at::Tensor>& weight, std::optional<double> eps, const std::string& owner);

// The same as a TorchScript expression of `x` and `weight` ("None" for none); unset eps is float32's
// (exports are float32).
std::string rmsNormScript(const std::string& x, size_t normalizedDims, const std::string& weight,
                          std::optional<double> eps);

}  // namespace firebrand

#include "core/nn/rms_norm.h"

#include <ATen/ATen.h>

#include <limits>

#include "core/errors.h"
#include "core/nn/script_text.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

// PyTorch's rms_norm computes half precision in float32 (its "opmath" type), eps included.
at::ScalarType computeType(at::ScalarType dtype) {
  return dtype == at::kHalf || dtype == at::kBFloat16 ? at::kFloat : dtype;
}

double machineEpsilon(at::ScalarType dtype) {
  return dtype == at::kDouble ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
}

std::vector<int64_t> trailingDims(size_t count) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < count; ++i) dims.push_back(-1 - static_cast<int64_t>(i));
  return dims;
}

}  // namespace

at::Tensor rmsNorm(const at::Tensor& input, const std::vector<int64_t>& normalizedShape,
                   const c10::optional<at::Tensor>& weight, std::optional<double> eps, const std::string& owner) {
  const auto sizes = input.sizes();
  const size_t dims = normalizedShape.size();
  if (sizes.size() < dims || sizes.slice(sizes.size() - dims) != c10::IntArrayRef(normalizedShape)) {
    const std::string trailing = shapeText(normalizedShape);
    throw ShapeMismatch(owner + ": normalizedShape " + trailing + " expects input of shape [*, " + trailing.substr(1) +
                        ", got " + shapeText(input));
  }
  // As PyTorch's rms_norm: normalized in float32 for half precision, cast back before the weight.
  const at::ScalarType type = computeType(input.scalar_type());
  const at::Tensor x = input.to(type);
  const at::Tensor scaled =
      (x * at::rsqrt(x.pow(2).mean(trailingDims(dims), /*keepdim=*/true) + eps.value_or(machineEpsilon(type))))
          .to(input.scalar_type());
  return weight ? scaled * *weight : scaled;
}

std::string rmsNormScript(const std::string& x, size_t normalizedDims, const std::string& weight,
                          std::optional<double> eps) {
  // float() is the identity on float32 (and widens half precision, as rms_norm does).
  const std::string wide = x + ".float()";
  const std::string mean = wide + ".pow(2).mean(" + scriptList(trailingDims(normalizedDims)) + ", keepdim=True)";
  const std::string scaled = "(" + wide + " * torch.rsqrt(" + mean + " + " +
                             scriptNumber(eps.value_or(std::numeric_limits<float>::epsilon())) + ")).type_as(" + x +
                             ")";
  return weight == "None" ? scaled : scaled + " * " + weight;
}

}  // namespace firebrand

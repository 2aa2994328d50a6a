#include "core/nn/rms_norm.h"

#include <ATen/ATen.h>

#include <limits>

#include "core/errors.h"
#include "core/nn/script_text.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

// torch.finfo(dtype).eps.
double machineEpsilon(at::ScalarType dtype) {
  switch (dtype) {
    case at::kDouble:
      return std::numeric_limits<double>::epsilon();
    case at::kHalf:
      return 0.0009765625;
    case at::kBFloat16:
      return 0.0078125;
    default:
      return std::numeric_limits<float>::epsilon();
  }
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
  const at::Tensor scaled = input * at::rsqrt(input.pow(2).mean(trailingDims(dims), /*keepdim=*/true) +
                                              eps.value_or(machineEpsilon(input.scalar_type())));
  return weight ? scaled * *weight : scaled;
}

std::string rmsNormScript(const std::string& x, size_t normalizedDims, const std::string& weight,
                          std::optional<double> eps) {
  const std::string mean = x + ".pow(2).mean(" + scriptList(trailingDims(normalizedDims)) + ", keepdim=True)";
  const std::string scaled =
      x + " * torch.rsqrt(" + mean + " + " + scriptNumber(eps.value_or(std::numeric_limits<float>::epsilon())) + ")";
  return weight == "None" ? scaled : scaled + " * " + weight;
}

}  // namespace firebrand

#include "core/nn/init_schemes.h"

#include <ATen/core/grad_mode.h>
#include <torch/nn/init.h>

#include <cmath>

#include "core/errors.h"
#include "core/nn/trunc_normal.h"
#include "core/options/resolved_options.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

// torch.nn.init._calculate_fan_in_and_fan_out.
std::pair<double, double> fans(const at::Tensor& tensor, const std::string& owner) {
  if (tensor.dim() < 2) {
    throw InvalidArgument(owner + ": fan in and fan out cannot be computed for a tensor of shape " + shapeText(tensor) +
                          " (fewer than 2 dimensions)");
  }
  const double receptive = tensor.dim() > 2 ? static_cast<double>(tensor[0][0].numel()) : 1.0;
  return {static_cast<double>(tensor.size(1)) * receptive, static_cast<double>(tensor.size(0)) * receptive};
}

// torch.nn.init.calculate_gain.
double gain(const std::string& nonlinearity, double a) {
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1.0 + a * a));
  if (nonlinearity == "selu") return 3.0 / 4.0;
  return 1.0;  // linear, conv*, sigmoid
}

double kaimingStd(const at::Tensor& tensor, ResolvedOptions& options, const std::string& owner) {
  const double a = options.number("a");
  const std::string mode = options.text("mode");
  const std::string nonlinearity = options.text("nonlinearity");
  const auto [fanIn, fanOut] = fans(tensor, owner);
  return gain(nonlinearity, a) / std::sqrt(mode == "fan_in" ? fanIn : fanOut);
}

double xavierStd(const at::Tensor& tensor, ResolvedOptions& options, const std::string& owner) {
  const auto [fanIn, fanOut] = fans(tensor, owner);
  return options.number("gain") * std::sqrt(2.0 / (fanIn + fanOut));
}

}  // namespace

void applyInit(at::Tensor& tensor, const std::string& scheme, const OptionMap& values, const std::string& owner) {
  at::NoGradGuard noGrad;
  ResolvedOptions options("nn.init." + scheme + "_ on " + owner, values);
  if (tensor.numel() == 0) return;  // PyTorch warns and leaves empty tensors alone
  if (scheme == "uniform") {
    const double a = options.number("a");
    tensor.uniform_(a, options.number("b"));
  } else if (scheme == "normal") {
    const double mean = options.number("mean");
    tensor.normal_(mean, options.number("std"));
  } else if (scheme == "truncNormal") {
    const double mean = options.number("mean");
    const double std = options.number("std");
    const double a = options.number("a");
    truncNormal(tensor, mean, std, a, options.number("b"));
  } else if (scheme == "constant") {
    tensor.fill_(options.number("val"));
  } else if (scheme == "xavierUniform") {
    const double bound = std::sqrt(3.0) * xavierStd(tensor, options, owner);
    tensor.uniform_(-bound, bound);
  } else if (scheme == "xavierNormal") {
    tensor.normal_(0, xavierStd(tensor, options, owner));
  } else if (scheme == "kaimingUniform") {
    const double bound = std::sqrt(3.0) * kaimingStd(tensor, options, owner);
    tensor.uniform_(-bound, bound);
  } else if (scheme == "kaimingNormal") {
    tensor.normal_(0, kaimingStd(tensor, options, owner));
  } else if (scheme == "orthogonal") {
    if (tensor.dim() < 2)
      throw InvalidArgument(owner + ": nn.init.orthogonal_ needs at least 2 dimensions, got " + shapeText(tensor));
    torch::nn::init::orthogonal_(tensor, options.number("gain"));
  } else {
    throw InvalidState("firebrand bug: nn.init scheme '" + scheme + "' reached C++ unknown");
  }
  options.finish();
}

}  // namespace firebrand

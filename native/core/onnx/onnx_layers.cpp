#include "core/onnx/onnx_layers.h"

#include <ATen/Functions.h>

#include <cmath>
#include <limits>

namespace firebrand {

std::vector<int64_t> onnxPads(const std::vector<int64_t>& padding) {
  std::vector<int64_t> pads = padding;
  pads.insert(pads.end(), padding.begin(), padding.end());
  return pads;
}

std::string onnxLinear(OnnxBuilder& b, const std::string& x, int64_t rank, const std::string& weight,
                       const std::string& bias) {
  if (rank == 2) {
    std::vector<std::string> inputs{x, weight};
    if (!bias.empty()) inputs.push_back(bias);
    return b.op("Gemm", inputs, {{"transB", int64_t{1}}});
  }
  const std::string product = b.op("MatMul", {x, b.op("Transpose", {weight}, {{"perm", std::vector<int64_t>{1, 0}}})});
  return bias.empty() ? product : b.op("Add", {product, bias});
}

std::string onnxLayerNorm(OnnxBuilder& b, const std::string& x, const std::vector<int64_t>& shape,
                          const std::string& weight, const std::string& bias, double eps, at::ScalarType type) {
  const std::string scale = weight.empty() ? b.constant(at::ones(shape, at::TensorOptions().dtype(type))) : weight;
  std::vector<std::string> inputs{x, scale};
  if (!bias.empty()) inputs.push_back(bias);
  return b.op("LayerNormalization", inputs, {{"axis", -static_cast<int64_t>(shape.size())}, {"epsilon", eps}});
}

std::string onnxRmsNorm(OnnxBuilder& b, const std::string& x, size_t dims, const std::string& weight,
                        std::optional<double> eps, at::ScalarType type) {
  std::vector<int64_t> axes;
  for (size_t d = 0; d < dims; ++d) axes.push_back(-static_cast<int64_t>(d) - 1);
  const double epsilon = eps.value_or(std::numeric_limits<float>::epsilon());
  const std::string meanSquare = b.reduce("ReduceMean", b.op("Mul", {x, x}), axes, true);
  const std::string scale = b.op("Reciprocal", {b.op("Sqrt", {b.op("Add", {meanSquare, b.scalar(epsilon, type)})})});
  const std::string normalized = b.op("Mul", {x, scale});
  return weight.empty() ? normalized : b.op("Mul", {normalized, weight});
}

namespace {

// A per-channel tensor [C] as [C, 1, ...] against an input of `rank` dims [N, C, ...].
std::string perChannel(OnnxBuilder& b, const std::string& tensor, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t d = 1; d < rank - 1; ++d) axes.push_back(d);
  return axes.empty() ? tensor : b.unsqueeze(tensor, axes);
}

}  // namespace

std::string onnxGroupNorm(OnnxBuilder& b, const std::string& x, int64_t rank, int64_t groups, const std::string& weight,
                          const std::string& bias, double eps, at::ScalarType type) {
  const std::string grouped = b.op("Reshape", {x, b.ints({0, groups, -1})});
  const std::string mean = b.reduce("ReduceMean", grouped, {2}, true);
  const std::string deviation = b.op("Sub", {grouped, mean});
  const std::string variance = b.reduce("ReduceMean", b.op("Mul", {deviation, deviation}), {2}, true);
  const std::string normalized = b.op("Div", {deviation, b.op("Sqrt", {b.op("Add", {variance, b.scalar(eps, type)})})});
  std::string out = b.op("Reshape", {normalized, b.shape(x)});
  if (!weight.empty()) out = b.op("Mul", {out, perChannel(b, weight, rank)});
  if (!bias.empty()) out = b.op("Add", {out, perChannel(b, bias, rank)});
  return out;
}

std::string onnxBatchNorm(OnnxBuilder& b, const std::string& x, int64_t channels, const std::string& weight,
                          const std::string& bias, const std::string& mean, const std::string& variance, double eps,
                          at::ScalarType type) {
  const auto options = at::TensorOptions().dtype(type);
  const std::string scale = weight.empty() ? b.constant(at::ones({channels}, options)) : weight;
  const std::string shift = bias.empty() ? b.constant(at::zeros({channels}, options)) : bias;
  return b.op("BatchNormalization", {x, scale, shift, mean, variance}, {{"epsilon", eps}});
}

std::string onnxConvolution(OnnxBuilder& b, const std::string& x, const std::string& weight, const std::string& bias,
                            const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                            const std::vector<int64_t>& dilation, int64_t groups) {
  std::vector<std::string> inputs{x, weight};
  if (!bias.empty()) inputs.push_back(bias);
  return b.op("Conv", inputs,
              {{"strides", stride}, {"pads", onnxPads(padding)}, {"dilations", dilation}, {"group", groups}});
}

std::string onnxAttention(OnnxBuilder& b, const std::string& q, const std::string& k, const std::string& v,
                          int64_t rank, double scale, const std::string& keep, const std::string& additive,
                          at::ScalarType type, std::string* weights) {
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d) perm.push_back(d);
  std::swap(perm[rank - 2], perm[rank - 1]);
  std::string scores =
      b.op("Mul", {b.op("MatMul", {q, b.op("Transpose", {k}, {{"perm", perm}})}), b.scalar(scale, type)});
  if (!keep.empty()) scores = b.op("Where", {keep, scores, b.scalar(-std::numeric_limits<double>::infinity(), type)});
  if (!additive.empty()) scores = b.op("Add", {scores, additive});
  const std::string probabilities = b.op("Softmax", {scores}, {{"axis", int64_t{-1}}});
  if (weights) *weights = probabilities;
  return b.op("MatMul", {probabilities, v});
}

std::string onnxCausalKeep(OnnxBuilder& b, const std::string& q, const std::string& k, bool alignEnd,
                           std::optional<std::string> window) {
  const std::string queries = b.squeeze(b.shape(q, -2, -1), {0});
  const std::string keys = b.squeeze(b.shape(k, -2, -1), {0});
  const std::string zero = b.scalar(0, at::kLong), one = b.scalar(1, at::kLong);
  std::string rows = b.op("Range", {zero, queries, one});
  if (alignEnd) rows = b.op("Add", {rows, b.op("Sub", {keys, queries})});
  const std::string row = b.unsqueeze(rows, {1});
  const std::string column = b.unsqueeze(b.op("Range", {zero, keys, one}), {0});
  const std::string keep = b.op("LessOrEqual", {column, row});
  if (!window) return keep;
  return b.op("And", {keep, b.op("Greater", {column, b.op("Sub", {row, *window})})});
}

}  // namespace firebrand

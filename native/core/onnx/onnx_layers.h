// ONNX forms an op row and a layer row share: F.linear exports as nn.Linear
// does, F.layerNorm as nn.LayerNorm, and so on. Tensors are ONNX names; ""
// is a tensor left out (no bias, no affine weight).
#pragma once
#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <vector>

#include "core/onnx/onnx_builder.h"

namespace firebrand {

// PyTorch's symmetric padding per spatial dim as ONNX's pads: every dim's begin, then every dim's end.
std::vector<int64_t> onnxPads(const std::vector<int64_t>& padding);

// x @ weightᵀ + bias: one Gemm for a matrix, a MatMul that broadcasts otherwise.
std::string onnxLinear(OnnxBuilder& b, const std::string& x, int64_t rank, const std::string& weight,
                       const std::string& bias);
// LayerNormalization over the trailing dims of `shape` (a missing weight is ones).
std::string onnxLayerNorm(OnnxBuilder& b, const std::string& x, const std::vector<int64_t>& shape,
                          const std::string& weight, const std::string& bias, double eps, at::ScalarType type);
// x / sqrt(mean(x², the trailing `dims`) + eps) · weight; unset eps is float32's machine epsilon.
std::string onnxRmsNorm(OnnxBuilder& b, const std::string& x, size_t dims, const std::string& weight,
                        std::optional<double> eps, at::ScalarType type);
// GroupNorm as PyTorch computes it: statistics per sample and group, then a weight and bias per channel.
std::string onnxGroupNorm(OnnxBuilder& b, const std::string& x, int64_t rank, int64_t groups, const std::string& weight,
                          const std::string& bias, double eps, at::ScalarType type);
// Batch (or instance) statistics kept from training: BatchNormalization in inference mode.
std::string onnxBatchNorm(OnnxBuilder& b, const std::string& x, int64_t channels, const std::string& weight,
                          const std::string& bias, const std::string& mean, const std::string& variance, double eps,
                          at::ScalarType type);
std::string onnxConvolution(OnnxBuilder& b, const std::string& x, const std::string& weight, const std::string& bias,
                            const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                            const std::vector<int64_t>& dilation, int64_t groups);
// Scaled dot-product attention in ONNX ops: softmax(q kᵀ · scale, masked) v. `keep` is a bool
// mask of the positions seen, `additive` a float one added to the scores ("" for none).
// `weights`, when given, receives the softmax's probabilities.
std::string onnxAttention(OnnxBuilder& b, const std::string& q, const std::string& k, const std::string& v,
                          int64_t rank, double scale, const std::string& keep, const std::string& additive,
                          at::ScalarType type, std::string* weights = nullptr);
// The causal keep mask of q's L positions against k's S, as PyTorch's is_causal (key j seen by
// query i when j <= i + offset); with a window (a 0-d int64), also j > i + offset - window.
// offset = S - L when `alignEnd`, else 0.
std::string onnxCausalKeep(OnnxBuilder& b, const std::string& q, const std::string& k, bool alignEnd,
                           std::optional<std::string> window);

}  // namespace firebrand

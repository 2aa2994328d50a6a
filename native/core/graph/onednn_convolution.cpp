#include "core/graph/onednn_convolution.h"

#include "core/graph/convolution_window.h"
#include "core/graph/format_strides.h"

namespace firebrand {

std::unique_ptr<OnednnConvolution> OnednnConvolution::make(const at::Tensor& input, const at::Tensor& weight,
                                                           const at::Tensor& bias, at::IntArrayRef stride,
                                                           at::IntArrayRef padding, at::IntArrayRef dilation,
                                                           int64_t groups, FusedActivation activation,
                                                           const OnednnConvolution* sibling,
                                                           const at::Tensor* residual) {
  const onednn::Api* a = onednn::convolutionApi();
  if (a == nullptr || stride.size() != 2 || padding.size() != 2 || dilation.size() != 2) return nullptr;
  std::unique_ptr<OnednnConvolution> made(new OnednnConvolution());
  made->format_ = input.suggest_memory_format();
  made->outputSizes_ = {input.size(0), weight.size(0), 0, 0};
  int64_t dilates[2];
  for (int d = 0; d < 2; ++d) {
    const int64_t span = windowSpan(weight.size(2 + d), dilation[d]), in = input.size(2 + d);
    // Padded alike on both sides, as PyTorch pads: oneDNN sizes the output as PyTorch does, rounding down
    // (a last window that would pass the padding is left out).
    const int64_t out = (in + 2 * padding[d] - span) / stride[d] + 1;
    made->outputSizes_[2 + d] = out;
    dilates[d] = dilation[d] - 1;
  }
  const at::Tensor dense = weight.contiguous();
  const at::Tensor grouped =
      groups == 1 ? dense
                  : dense.view({groups, weight.size(0) / groups, weight.size(1), weight.size(2), weight.size(3)});
  if (residual && !residual->sizes().equals(made->outputSizes_)) return nullptr;
  onednn::Owned source(a->memoryDescDestroy), weightsAny(a->memoryDescDestroy), biasDesc(a->memoryDescDestroy),
      destination(a->memoryDescDestroy), attr(a->attrDestroy), desc(a->primitiveDescDestroy),
      residualDesc(a->memoryDescDestroy);
  const at::Tensor biasValues = bias.defined() ? bias.contiguous() : at::Tensor();
  if (!onednnDescribe(source, input.sizes(), input.strides()) ||
      !onednnDescribe(destination, made->outputSizes_, denseStrides(made->outputSizes_, made->format_)) ||
      (bias.defined() && !onednnDescribe(biasDesc, biasValues.sizes(), biasValues.strides())) ||
      a->memoryDescCreateWithTag(&weightsAny.handle, static_cast<int>(grouped.dim()), grouped.sizes().data(),
                                 onednn::kFloat32, onednn::kFormatAny) != 0 ||
      (residual && !onednnDescribe(residualDesc, residual->sizes(), residual->strides())) ||
      !onednnAttributes(attr, activation, residualDesc.handle))
    return nullptr;
  if (a->convolutionForwardCreate(&desc.handle, a->engine, onednn::kForwardInference, onednn::kConvolutionDirect,
                                  source.handle, weightsAny.handle, biasDesc.handle, destination.handle, stride.data(),
                                  dilates, padding.data(), padding.data(), attr.handle) != 0)
    return nullptr;
  const bool built = made->build(desc.handle, source.handle, destination.handle, biasDesc.handle, grouped, biasValues,
                                 sibling, residualDesc.handle);
  return built ? std::move(made) : nullptr;
}

at::Tensor OnednnConvolution::run(const at::Tensor& input, const at::Tensor* residual) {
  at::Tensor output = at::empty(outputSizes_, input.options().memory_format(format_));
  execute(input, output, "a convolution", residual);
  return output;
}

}  // namespace firebrand

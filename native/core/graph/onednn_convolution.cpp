#include "core/graph/onednn_convolution.h"

#include <string>

#include "core/errors.h"
#include "core/graph/convolution_window.h"
#include "core/graph/format_strides.h"

namespace firebrand {
namespace {

using onednn::Handle;

// Owns one oneDNN object, destroyed by `destroy`.
struct Owned {
  Handle handle = nullptr;
  onednn::Status (*destroy)(Handle) = nullptr;
  explicit Owned(onednn::Status (*destroyer)(Handle)) : destroy(destroyer) {}
  ~Owned() {
    if (handle != nullptr) destroy(handle);
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
};

// A float32 memory descriptor of `sizes` laid out by `strides`.
bool describe(Owned& desc, at::IntArrayRef sizes, at::IntArrayRef strides) {
  return onednn::api()->memoryDescCreateWithStrides(&desc.handle, static_cast<int>(sizes.size()), sizes.data(),
                                                    onednn::kFloat32, strides.data()) == 0;
}

// oneDNN's eltwise algorithm and its alpha and beta for `activation`: hardswish is x * clamp(x/6 + 1/2, 0, 1)
// and hardsigmoid clamp(x/6 + 1/2, 0, 1) there, PyTorch's formulas.
struct Eltwise {
  int algorithm;
  float alpha, beta;
};
Eltwise eltwiseOf(FusedActivation activation) {
  if (activation == FusedActivation::Hardswish) return {onednn::kEltwiseHardswish, 1.0f / 6, 0.5f};
  if (activation == FusedActivation::Hardsigmoid) return {onednn::kEltwiseHardsigmoid, 1.0f / 6, 0.5f};
  return {onednn::kEltwiseRelu, 0.0f, 0.0f};
}

// Primitive attributes: the scratchpad passed at each call (from the memory cache), the activation as a post-op.
bool attributes(Owned& attr, FusedActivation activation) {
  const onednn::Api& a = *onednn::api();
  if (a.attrCreate(&attr.handle) != 0 || a.attrSetScratchpadMode(attr.handle, onednn::kScratchpadUser) != 0)
    return false;
  if (activation == FusedActivation::None) return true;
  const Eltwise eltwise = eltwiseOf(activation);
  Owned postOps(a.postOpsDestroy);
  return a.postOpsCreate(&postOps.handle) == 0 &&
         a.postOpsAppendEltwise(postOps.handle, eltwise.algorithm, eltwise.alpha, eltwise.beta) == 0 &&
         a.attrSetPostOps(attr.handle, postOps.handle) == 0;
}

void check(onednn::Status status, const char* what) {
  if (status != 0) throw InvalidState(std::string("oneDNN failed (status ") + std::to_string(status) + ") " + what);
}

}  // namespace

std::unique_ptr<OnednnConvolution> OnednnConvolution::make(const at::Tensor& input, const at::Tensor& weight,
                                                           const at::Tensor& bias, at::IntArrayRef stride,
                                                           at::IntArrayRef padding, at::IntArrayRef dilation,
                                                           int64_t groups, FusedActivation activation,
                                                           const OnednnConvolution* sibling) {
  const onednn::Api* a = onednn::api();
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
  Owned source(a->memoryDescDestroy), weightsAny(a->memoryDescDestroy), biasDesc(a->memoryDescDestroy),
      destination(a->memoryDescDestroy), attr(a->attrDestroy), desc(a->primitiveDescDestroy);
  made->biasValues_ = bias.defined() ? bias.contiguous() : at::Tensor();
  if (!describe(source, input.sizes(), input.strides()) ||
      !describe(destination, made->outputSizes_, denseStrides(made->outputSizes_, made->format_)) ||
      (bias.defined() && !describe(biasDesc, made->biasValues_.sizes(), made->biasValues_.strides())) ||
      a->memoryDescCreateWithTag(&weightsAny.handle, static_cast<int>(grouped.dim()), grouped.sizes().data(),
                                 onednn::kFloat32, onednn::kFormatAny) != 0 ||
      !attributes(attr, activation))
    return nullptr;
  if (a->convolutionForwardCreate(&desc.handle, a->engine, onednn::kForwardInference, onednn::kConvolutionDirect,
                                  source.handle, weightsAny.handle, biasDesc.handle, destination.handle, stride.data(),
                                  dilates, padding.data(), padding.data(), attr.handle) != 0 ||
      !made->packWeight(desc.handle, grouped, sibling) || a->primitiveCreate(&made->primitive_, desc.handle) != 0)
    return nullptr;
  const Handle scratchpad = a->primitiveDescQueryMd(desc.handle, onednn::kQueryScratchpad, 0);
  made->scratchpadBytes_ = scratchpad != nullptr ? a->memoryDescGetSize(scratchpad) : 0;
  const bool memories =
      a->memoryCreate(&made->source_, source.handle, a->engine, nullptr) == 0 &&
      a->memoryCreate(&made->destination_, destination.handle, a->engine, nullptr) == 0 &&
      (!bias.defined() ||
       a->memoryCreate(&made->bias_, biasDesc.handle, a->engine, made->biasValues_.data_ptr()) == 0) &&
      (made->scratchpadBytes_ == 0 || a->memoryCreate(&made->scratchpad_, scratchpad, a->engine, nullptr) == 0);
  return memories ? std::move(made) : nullptr;
}

bool OnednnConvolution::packWeight(Handle desc, const at::Tensor& weight, const OnednnConvolution* sibling) {
  const onednn::Api& a = *onednn::api();
  const Handle packed = a.primitiveDescQueryMd(desc, onednn::kQueryWeights, 0);
  Handle siblings = nullptr;
  if (packed != nullptr && sibling != nullptr && a.memoryGetMemoryDesc(sibling->weights_, &siblings) == 0 &&
      a.memoryDescEqual(siblings, packed) == 1) {
    packedWeight_ = sibling->packedWeight_;
    return a.memoryCreate(&weights_, packed, a.engine, packedWeight_.data_ptr()) == 0;
  }
  Owned plain(a.memoryDescDestroy), reorderDesc(a.primitiveDescDestroy), reorder(a.primitiveDestroy),
      from(a.memoryDestroy), to(a.memoryDestroy);
  if (packed == nullptr || !describe(plain, weight.sizes(), weight.strides()) ||
      a.reorderCreate(&reorderDesc.handle, plain.handle, a.engine, packed, a.engine, nullptr) != 0 ||
      a.primitiveCreate(&reorder.handle, reorderDesc.handle) != 0)
    return false;
  packedWeight_ = at::empty({static_cast<int64_t>(a.memoryDescGetSize(packed))}, weight.options().dtype(at::kByte));
  if (a.memoryCreate(&from.handle, plain.handle, a.engine, weight.data_ptr()) != 0 ||
      a.memoryCreate(&to.handle, packed, a.engine, packedWeight_.data_ptr()) != 0 ||
      a.memoryCreate(&weights_, packed, a.engine, packedWeight_.data_ptr()) != 0)
    return false;
  const onednn::ExecArg args[] = {{onednn::kArgSource, from.handle}, {onednn::kArgDestination, to.handle}};
  return a.primitiveExecute(reorder.handle, onednn::threadStream(), 2, args) == 0;
}

at::Tensor OnednnConvolution::run(const at::Tensor& input) {
  const onednn::Api& a = *onednn::api();
  at::Tensor output = at::empty(outputSizes_, input.options().memory_format(format_));
  at::Tensor scratchpad;
  if (scratchpadBytes_ > 0)
    scratchpad = at::empty({static_cast<int64_t>(scratchpadBytes_)}, input.options().dtype(at::kByte));
  std::lock_guard<std::mutex> lock(running_);
  check(a.memorySetDataHandle(source_, input.data_ptr()), "setting a convolution's input");
  check(a.memorySetDataHandle(destination_, output.data_ptr()), "setting a convolution's output");
  onednn::ExecArg args[5] = {
      {onednn::kArgSource, source_}, {onednn::kArgWeights, weights_}, {onednn::kArgDestination, destination_}};
  int count = 3;
  if (bias_ != nullptr) args[count++] = {onednn::kArgBias, bias_};
  if (scratchpad_ != nullptr) {
    check(a.memorySetDataHandle(scratchpad_, scratchpad.data_ptr()), "setting a convolution's scratchpad");
    args[count++] = {onednn::kArgScratchpad, scratchpad_};
  }
  check(a.primitiveExecute(primitive_, onednn::threadStream(), count, args), "running a convolution");
  return output;
}

OnednnConvolution::~OnednnConvolution() {
  const onednn::Api* a = onednn::api();
  for (Handle memory : {source_, destination_, weights_, bias_, scratchpad_})
    if (memory != nullptr) a->memoryDestroy(memory);
  if (primitive_ != nullptr) a->primitiveDestroy(primitive_);
}

}  // namespace firebrand

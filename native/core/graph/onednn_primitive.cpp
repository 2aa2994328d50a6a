#include "core/graph/onednn_primitive.h"

#include <string>

#include "core/errors.h"

namespace firebrand {
namespace {

using onednn::Handle;

// oneDNN's eltwise algorithm and its alpha and beta for `activation`: hardswish is x * clamp(x/6 + 1/2, 0, 1)
// and hardsigmoid clamp(x/6 + 1/2, 0, 1) there, PyTorch's formulas; swish x * sigmoid(alpha x).
struct Eltwise {
  int algorithm;
  float alpha, beta;
};
Eltwise eltwiseOf(FusedActivation activation) {
  switch (activation) {
    case FusedActivation::Hardswish:
      return {onednn::kEltwiseHardswish, 1.0f / 6, 0.5f};
    case FusedActivation::Hardsigmoid:
      return {onednn::kEltwiseHardsigmoid, 1.0f / 6, 0.5f};
    case FusedActivation::Gelu:
      return {onednn::kEltwiseGeluErf, 0.0f, 0.0f};
    case FusedActivation::GeluTanh:
      return {onednn::kEltwiseGeluTanh, 0.0f, 0.0f};
    case FusedActivation::Silu:
      return {onednn::kEltwiseSwish, 1.0f, 0.0f};
    default:
      return {onednn::kEltwiseRelu, 0.0f, 0.0f};
  }
}

// Throws where `status` is a failure, naming it "<doing> <what><part>".
void check(onednn::Status status, const char* doing, const char* what, const char* part = "") {
  if (status != 0)
    throw InvalidState("oneDNN failed (status " + std::to_string(status) + ") " + doing + " " + what + part);
}

}  // namespace

bool onednnDescribe(onednn::Owned& desc, at::IntArrayRef sizes, at::IntArrayRef strides) {
  return onednn::api()->memoryDescCreateWithStrides(&desc.handle, static_cast<int>(sizes.size()), sizes.data(),
                                                    onednn::kFloat32, strides.data()) == 0;
}

bool onednnAttributes(onednn::Owned& attr, FusedActivation activation, Handle residual) {
  const onednn::Api& a = *onednn::api();
  if (a.attrCreate(&attr.handle) != 0 || a.attrSetScratchpadMode(attr.handle, onednn::kScratchpadUser) != 0)
    return false;
  if (activation == FusedActivation::None && residual == nullptr) return true;
  onednn::Owned postOps(a.postOpsDestroy);
  if (a.postOpsCreate(&postOps.handle) != 0) return false;
  // The residual first (post-op 0, kArgFirstPostOpSource1), then the activation: PyTorch's relu(conv(x) + r).
  if (residual != nullptr && a.postOpsAppendBinary(postOps.handle, onednn::kBinaryAdd, residual) != 0) return false;
  const Eltwise eltwise = eltwiseOf(activation);
  if (activation != FusedActivation::None &&
      a.postOpsAppendEltwise(postOps.handle, eltwise.algorithm, eltwise.alpha, eltwise.beta) != 0)
    return false;
  return a.attrSetPostOps(attr.handle, postOps.handle) == 0;
}

bool OnednnPrimitive::build(Handle desc, Handle source, Handle destination, Handle biasDesc, const at::Tensor& weight,
                            const at::Tensor& bias, const OnednnPrimitive* sibling, Handle residual) {
  const onednn::Api& a = *onednn::api();
  if (!packWeight(desc, weight, sibling) || a.primitiveCreate(&primitive_, desc) != 0) return false;
  biasValues_ = bias;
  const Handle scratchpad = a.primitiveDescQueryMd(desc, onednn::kQueryScratchpad, 0);
  scratchpadBytes_ = scratchpad != nullptr ? a.memoryDescGetSize(scratchpad) : 0;
  return a.memoryCreate(&source_, source, a.engine, nullptr) == 0 &&
         a.memoryCreate(&destination_, destination, a.engine, nullptr) == 0 &&
         (!bias.defined() || a.memoryCreate(&bias_, biasDesc, a.engine, biasValues_.data_ptr()) == 0) &&
         (scratchpadBytes_ == 0 || a.memoryCreate(&scratchpad_, scratchpad, a.engine, nullptr) == 0) &&
         (residual == nullptr || a.memoryCreate(&residual_, residual, a.engine, nullptr) == 0);
}

bool OnednnPrimitive::packWeight(Handle desc, const at::Tensor& weight, const OnednnPrimitive* sibling) {
  const onednn::Api& a = *onednn::api();
  const Handle packed = a.primitiveDescQueryMd(desc, onednn::kQueryWeights, 0);
  Handle siblings = nullptr;
  if (packed != nullptr && sibling != nullptr && a.memoryGetMemoryDesc(sibling->weights_, &siblings) == 0 &&
      a.memoryDescEqual(siblings, packed) == 1) {
    packedWeight_ = sibling->packedWeight_;
    return a.memoryCreate(&weights_, packed, a.engine, packedWeight_.data_ptr()) == 0;
  }
  onednn::Owned plain(a.memoryDescDestroy), reorderDesc(a.primitiveDescDestroy), reorder(a.primitiveDestroy),
      from(a.memoryDestroy), to(a.memoryDestroy);
  if (packed == nullptr || !onednnDescribe(plain, weight.sizes(), weight.strides()) ||
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

void OnednnPrimitive::execute(const at::Tensor& input, const at::Tensor& output, const char* what,
                              const at::Tensor* residual) {
  const onednn::Api& a = *onednn::api();
  at::Tensor scratchpad;
  if (scratchpadBytes_ > 0)
    scratchpad = at::empty({static_cast<int64_t>(scratchpadBytes_)}, input.options().dtype(at::kByte));
  std::lock_guard<std::mutex> lock(running_);
  check(a.memorySetDataHandle(source_, input.data_ptr()), "setting", what, "'s input");
  check(a.memorySetDataHandle(destination_, output.data_ptr()), "setting", what, "'s output");
  onednn::ExecArg args[6] = {
      {onednn::kArgSource, source_}, {onednn::kArgWeights, weights_}, {onednn::kArgDestination, destination_}};
  int count = 3;
  if (bias_ != nullptr) args[count++] = {onednn::kArgBias, bias_};
  if (scratchpad_ != nullptr) {
    check(a.memorySetDataHandle(scratchpad_, scratchpad.data_ptr()), "setting", what, "'s scratchpad");
    args[count++] = {onednn::kArgScratchpad, scratchpad_};
  }
  if (residual_ != nullptr) {
    if (residual == nullptr) throw InvalidState("firebrand bug: " + std::string(what) + " ran without its residual");
    check(a.memorySetDataHandle(residual_, residual->data_ptr()), "setting", what, "'s residual");
    args[count++] = {onednn::kArgFirstPostOpSource1, residual_};
  }
  check(a.primitiveExecute(primitive_, onednn::threadStream(), count, args), "running", what);
}

OnednnPrimitive::~OnednnPrimitive() {
  const onednn::Api* a = onednn::api();
  for (Handle memory : {source_, destination_, weights_, bias_, scratchpad_, residual_})
    if (memory != nullptr) a->memoryDestroy(memory);
  if (primitive_ != nullptr) a->primitiveDestroy(primitive_);
}

}  // namespace firebrand

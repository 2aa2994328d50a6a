#include "core/graph/onednn_linear.h"

#include <atomic>

namespace firebrand {
namespace {

std::atomic<int64_t> productsComputed{0};

}  // namespace

std::unique_ptr<OnednnLinear> OnednnLinear::make(int64_t rows, const at::Tensor& weight, const at::Tensor& bias,
                                                 FusedActivation activation, const OnednnLinear* sibling) {
  const onednn::Api* a = onednn::matmulApi();
  if (a == nullptr || weight.dim() != 2) return nullptr;
  const int64_t in = weight.size(1), out = weight.size(0);
  std::unique_ptr<OnednnLinear> made(new OnednnLinear());
  made->outFeatures_ = out;
  // The matmul's weight is [in, out]: the layer's [out, in] read transposed.
  const at::Tensor transposed = weight.t();
  const at::Tensor biasRow = bias.defined() ? bias.contiguous().view({1, out}) : at::Tensor();
  const int64_t weightSizes[] = {in, out};
  onednn::Owned source(a->memoryDescDestroy), weightsAny(a->memoryDescDestroy), biasDesc(a->memoryDescDestroy),
      destination(a->memoryDescDestroy), attr(a->attrDestroy), desc(a->primitiveDescDestroy);
  if (!onednnDescribe(source, {rows, in}, {in, 1}) || !onednnDescribe(destination, {rows, out}, {out, 1}) ||
      (bias.defined() && !onednnDescribe(biasDesc, biasRow.sizes(), biasRow.strides())) ||
      a->memoryDescCreateWithTag(&weightsAny.handle, 2, weightSizes, onednn::kFloat32, onednn::kFormatAny) != 0 ||
      !onednnAttributes(attr, activation) ||
      a->matmulCreate(&desc.handle, a->engine, source.handle, weightsAny.handle, biasDesc.handle, destination.handle,
                      attr.handle) != 0)
    return nullptr;
  const bool built =
      made->build(desc.handle, source.handle, destination.handle, biasDesc.handle, transposed, biasRow, sibling);
  return built ? std::move(made) : nullptr;
}

at::Tensor OnednnLinear::run(const at::Tensor& rows) {
  at::Tensor output = at::empty({rows.size(0), outFeatures_}, rows.options());
  execute(rows, output, "a linear layer");
  productsComputed.fetch_add(1, std::memory_order_relaxed);
  return output;
}

int64_t onednnMatmulProducts() { return productsComputed.load(std::memory_order_relaxed); }

}  // namespace firebrand

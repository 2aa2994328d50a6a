#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <mutex>
#include <vector>

#include "core/graph/fused_activation.h"
#include "core/runtime/onednn_api.h"

namespace firebrand {

// A float32 convolution at inference for one input size, run by oneDNN 3 itself: the primitive, its memory
// objects and the weight in the primitive's blocked layout made once, so that a call sets three pointers and
// executes. (libtorch 2.14's prepacked run made ~240 allocations and a oneDNN engine per call: 18% of
// MobileNetV3's batch-1 predict went to them, docs/performance.md.)
class OnednnConvolution {
 public:
  // The convolution for inputs with `input`'s sizes and layout (which the kernel's window fits), then its
  // `activation` (oneDNN's post-op), or null where there is no oneDNN 3 here (onednn::api()) or it takes no
  // such convolution. `sibling`, the same convolution made for other sizes, lends its packed weight where the
  // layouts agree: a model predicting at several batch sizes keeps one packed copy, not one per size.
  static std::unique_ptr<OnednnConvolution> make(const at::Tensor& input, const at::Tensor& weight,
                                                 const at::Tensor& bias, at::IntArrayRef stride,
                                                 at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups,
                                                 FusedActivation activation,
                                                 const OnednnConvolution* sibling = nullptr);
  ~OnednnConvolution();
  OnednnConvolution(const OnednnConvolution&) = delete;
  OnednnConvolution& operator=(const OnednnConvolution&) = delete;

  // The output for an input of the sizes and layout this was made for.
  at::Tensor run(const at::Tensor& input);

 private:
  OnednnConvolution() = default;
  // The weight (dense in rows; [groups, out, in, kH, kW] where grouped) reordered into the layout the
  // primitive `desc` computes with, or `sibling`'s packed copy where it is in that layout.
  bool packWeight(onednn::Handle desc, const at::Tensor& weight, const OnednnConvolution* sibling);

  onednn::Handle primitive_ = nullptr;
  onednn::Handle source_ = nullptr, destination_ = nullptr, weights_ = nullptr, bias_ = nullptr, scratchpad_ = nullptr;
  at::Tensor packedWeight_, biasValues_;
  std::vector<int64_t> outputSizes_;
  c10::MemoryFormat format_ = c10::MemoryFormat::Contiguous;
  size_t scratchpadBytes_ = 0;
  std::mutex running_;  // a call's pointers are set on shared memory objects
};

}  // namespace firebrand

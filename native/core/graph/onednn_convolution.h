#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "core/graph/fused_activation.h"
#include "core/graph/onednn_primitive.h"

namespace firebrand {

// A float32 convolution at inference for one input size, run by oneDNN 3 itself: the primitive, its memory
// objects and the weight in the primitive's blocked layout made once, so that a call sets three pointers and
// executes. (libtorch 2.14's prepacked run made ~240 allocations and a oneDNN engine per call: 18% of
// MobileNetV3's batch-1 predict went to them, docs/performance.md.)
class OnednnConvolution : public OnednnPrimitive {
 public:
  // The convolution for inputs with `input`'s sizes and layout (which the kernel's window fits), then its
  // `activation` (oneDNN's post-ops; `residual`, where given, added before it), or null where there is no oneDNN 3 here
  // (onednn::convolutionApi()) or it takes no such convolution. `sibling`, the same convolution made for other sizes,
  // lends its packed weight where the layouts agree.
  static std::unique_ptr<OnednnConvolution> make(const at::Tensor& input, const at::Tensor& weight,
                                                 const at::Tensor& bias, at::IntArrayRef stride,
                                                 at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups,
                                                 FusedActivation activation, const OnednnConvolution* sibling = nullptr,
                                                 const at::Tensor* residual = nullptr);

  // The output for an input of the sizes and layout this was made for, and the residual it adds, of the output's
  // sizes and the strides `make`'s had (where it was given one).
  at::Tensor run(const at::Tensor& input, const at::Tensor* residual = nullptr);

 private:
  OnednnConvolution() = default;

  std::vector<int64_t> outputSizes_;
  c10::MemoryFormat format_ = c10::MemoryFormat::Contiguous;
};

}  // namespace firebrand

#pragma once

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include <memory>
#include <optional>
#include <vector>

#include "core/graph/fused_activation.h"
#include "core/graph/onednn_convolution.h"

namespace firebrand {

// A float32 convolution at inference whose weight oneDNN reorders once into the blocked layout it computes
// in, not at every call as at::conv2d does: ResNet-18 at batch 1 ran 10-25% faster so on libtorch 2.14
// (docs/performance.md). Run by oneDNN 3 itself where libtorch links it (OnednnConvolution), else by libtorch's
// mkldnn_prepacked::conv2d_prepack (what torch.jit.optimize_for_inference runs).
class PackedConvolution {
 public:
  // The convolution of `input` then its `activation` (oneDNN's post-op; libtorch's packing takes a ReLU only, and
  // the others run after it), packed for its sizes the first time they come (a few sizes are kept), or nullopt
  // where libtorch has no prepacked convolution or it does not take this input (float32, 4-D, dense in rows or
  // channels-last, on the CPU).
  // With a `residual`, it is added before the activation, on oneDNN 3's own primitive only (nullopt elsewhere).
  std::optional<at::Tensor> run(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias,
                                at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                                int64_t groups, FusedActivation activation, const at::Tensor* residual = nullptr);
  // The weight changed: every packed copy is dropped (and packing tried again).
  void clear() { packed_.clear(); }

 private:
  struct Packed {
    std::vector<int64_t> sizes;
    c10::MemoryFormat format;
    FusedActivation activation;
    std::vector<int64_t> residualStrides;       // empty: no residual
    std::shared_ptr<OnednnConvolution> direct;  // or libtorch's packed `context`
    c10::IValue context;
  };
  // libtorch's packing of `packed`'s sizes into its context; false (no context) where it refuses them.
  bool prepack(Packed& packed, const at::Tensor& weight, const at::Tensor& bias, at::IntArrayRef stride,
               at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups);
  std::vector<Packed> packed_;  // a size libtorch refused to pack is kept too, with no context
};

}  // namespace firebrand

// What the oneDNN 3 primitives firebrand runs itself at inference share (onednn_convolution.h,
// onednn_linear.h): the primitive made once for one input size, its memory objects, and the weight
// reordered once into the layout the primitive computes in, so that a call sets a few pointers and executes.
#pragma once

#include <ATen/ATen.h>

#include <mutex>

#include "core/graph/fused_activation.h"
#include "core/runtime/onednn_api.h"

namespace firebrand {

// A float32 memory descriptor of `sizes` laid out by `strides`.
bool onednnDescribe(onednn::Owned& desc, at::IntArrayRef sizes, at::IntArrayRef strides);

// Primitive attributes: the scratchpad passed at each call (from the memory cache), and as post-ops a residual
// added (described by `residual`, where not null: a tensor of the output's sizes) then the activation.
bool onednnAttributes(onednn::Owned& attr, FusedActivation activation, onednn::Handle residual = nullptr);

class OnednnPrimitive {
 public:
  ~OnednnPrimitive();
  OnednnPrimitive(const OnednnPrimitive&) = delete;
  OnednnPrimitive& operator=(const OnednnPrimitive&) = delete;

 protected:
  OnednnPrimitive() = default;
  // Makes the primitive of `desc` and its memory objects: `weight` (the primitive's logical sizes, any
  // strides) reordered into the layout `desc` computes with, or `sibling`'s packed copy where it is in that
  // layout (a model predicting at several sizes keeps one copy, not one per size), and `bias`, described
  // by `biasDesc`. False where oneDNN refuses any of them.
  // `residual`: the description of the residual the attributes add, if any.
  bool build(onednn::Handle desc, onednn::Handle source, onednn::Handle destination, onednn::Handle biasDesc,
             const at::Tensor& weight, const at::Tensor& bias, const OnednnPrimitive* sibling,
             onednn::Handle residual = nullptr);
  // Computes `output` from `input` (and the `residual` it was made to add), all of the sizes and layouts the
  // primitive was made for; `what` names the op in errors.
  void execute(const at::Tensor& input, const at::Tensor& output, const char* what,
               const at::Tensor* residual = nullptr);

 private:
  bool packWeight(onednn::Handle desc, const at::Tensor& weight, const OnednnPrimitive* sibling);

  onednn::Handle primitive_ = nullptr;
  onednn::Handle source_ = nullptr, destination_ = nullptr, weights_ = nullptr, bias_ = nullptr, scratchpad_ = nullptr,
                 residual_ = nullptr;
  at::Tensor packedWeight_, biasValues_;
  size_t scratchpadBytes_ = 0;
  std::mutex running_;  // a call's pointers are set on shared memory objects
};

}  // namespace firebrand

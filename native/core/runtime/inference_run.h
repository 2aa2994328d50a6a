// Whether the calling thread is inside a prediction or a generation step. Kernels
// that compute without autograd in their own summation order (nn/streamed_linear)
// run only then: inside training, a checkpointed segment's no-grad forward must
// equal its recompute in backward, which runs the autograd path.
#pragma once

namespace firebrand {

// Marks the thread as inside one while alive (`on`: predict's optimizeForInference: false passes false).
class InferenceRun {
 public:
  explicit InferenceRun(bool on = true);
  ~InferenceRun();
  InferenceRun(const InferenceRun&) = delete;
  InferenceRun& operator=(const InferenceRun&) = delete;

 private:
  bool previous_;
};

bool inInferenceRun();

}  // namespace firebrand

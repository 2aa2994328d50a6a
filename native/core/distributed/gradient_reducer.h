// Averages gradients over the ranks as PyTorch's DDP does: parameters are
// grouped into buckets in reverse registration order (about the order
// backward produces their gradients); when the last gradient of a bucket is
// accumulated, an autograd hook starts that bucket's all-reduce, so
// communication overlaps the rest of backward. Buckets start in order on
// every rank, as collectives must.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "core/distributed/distributed_group.h"

namespace firebrand {

class GradientReducer {
 public:
  // `parameters`: those that train (requires_grad). The first bucket is kept
  // small (1 MiB at most, as DDP) so that communication starts early.
  GradientReducer(std::shared_ptr<DistributedGroup> group, const std::vector<at::Tensor>& parameters,
                  int64_t bucketCapBytes);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Before a micro-batch's backward: whether it ends the accumulation group.
  // Only then do the hooks start all-reduces; other micro-batches just
  // accumulate local gradients (DDP's no_sync).
  void prepareBackward(bool reduce);
  // After the group's last backward: starts the buckets whose hooks did not
  // fire (gradients computed by autograd::grad, parameters unused this step:
  // they count as zero), waits for all, and leaves the mean gradient in every
  // parameter's .grad.
  void finishGradients();

  int64_t bucketCount() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
  // The parameters' gradient accumulators (kept alive: a new one would not
  // have the hook) and the keys that remove their hooks.
  struct Hook;
  std::vector<Hook> hooks_;
};

}  // namespace firebrand

// torch.nn.SyncBatchNorm: a batch norm that, while it trains in a
// data-parallel run, normalizes by the mean and variance of every rank's batch
// together, as one process would over the global batch (forward and
// gradients). In eval mode, or outside a distributed run, it is BatchNorm.
// The statistics are summed over the ranks by an operation whose gradient is
// the same sum of the gradients, so autograd backpropagates across ranks.
#pragma once
#include <torch/nn/cloneable.h>
#include <torch/nn/options/batchnorm.h>
#include <torch/nn/pimpl.h>

#include <functional>

namespace firebrand {

// Sums a tensor over the ranks of a run, in place (every rank calls it at the same point).
using RankSum = std::function<void(at::Tensor&)>;

class SyncBatchNormImpl : public torch::nn::Cloneable<SyncBatchNormImpl> {
 public:
  explicit SyncBatchNormImpl(torch::nn::BatchNormOptions options);
  void reset() override;
  // Input [N, C, *].
  at::Tensor forward(const at::Tensor& input);
  // Called by the data-parallel run that trains it; empty again: a BatchNorm of each rank's batch.
  void synchronize(RankSum rankSum) { rankSum_ = std::move(rankSum); }

  torch::nn::BatchNormOptions options;
  at::Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  at::Tensor synchronized(const at::Tensor& input, double momentum);

  RankSum rankSum_;
};
TORCH_MODULE(SyncBatchNorm);

}  // namespace firebrand

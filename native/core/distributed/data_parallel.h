// What changes in the training engine when it is one rank of a data-parallel
// run: rank 0's weights at the start, a shard of each epoch, gradients
// averaged over the ranks, and sums (loss, samples, metrics) that every rank
// reports globally.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <memory>
#include <string>
#include <vector>

#include "core/data/batch_sampler.h"
#include "core/distributed/distributed_group.h"
#include "core/distributed/gradient_reducer.h"
#include "core/model/model.h"

namespace firebrand {

class DataParallel {
 public:
  // Joins the process group and overwrites `model`'s parameters and buffers with rank 0's.
  DataParallel(const DistributedOptions& options, Model& model, const c10::Device& device);

  int64_t rank() const { return group_->rank(); }
  int64_t worldSize() const { return group_->worldSize(); }
  const std::string& backendName() const { return group_->backendName(); }
  int64_t bucketCount() const { return reducer_.bucketCount(); }

  // This rank's part of an epoch: padded to equal shards for training (as
  // DistributedSampler), or every sample once (`evenShards` false, evaluation).
  SamplerOptions shard(SamplerOptions sampler, bool evenShards) const;
  // Before each micro-batch's forward and backward.
  void beforeMicroBatch(bool firstOfGroup, bool lastOfGroup);
  // After the accumulation group's last backward: the mean gradients are in .grad.
  void finishGradients() { reducer_.finishGradients(); }
  // Sums `values` over the ranks in one collective.
  std::vector<double> sumOverRanks(const std::vector<double>& values, const std::string& what);
  // Sums each tensor in place over the ranks.
  void sumInPlace(const std::vector<at::Tensor>& tensors, const std::string& what);

 private:
  std::shared_ptr<DistributedGroup> group_;
  Model& model_;
  c10::Device device_;
  bool broadcastBuffers_;
  GradientReducer reducer_;
};

}  // namespace firebrand

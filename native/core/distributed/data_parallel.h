// What changes in the training engine when it is one rank of a data-parallel
// run: rank 0's weights at the start, a shard of each epoch, gradients
// averaged over the ranks, and sums (loss, samples, metrics) that every rank
// reports globally.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/data/batch_sampler.h"
#include "core/distributed/distributed_group.h"
#include "core/distributed/gradient_reducer.h"
#include "core/distributed/optimizer_sharding.h"
#include "core/distributed/rank_reducer.h"
#include "core/model/model.h"

namespace firebrand {

class DataParallel : public RankReducer {
 public:
  // Joins the process group and overwrites `model`'s parameters and buffers with rank 0's.
  DataParallel(const DistributedOptions& options, Model& model, const c10::Device& device);

  int64_t rank() const override { return group_->rank(); }
  int64_t worldSize() const override { return group_->worldSize(); }
  const std::string& backendName() const override { return group_->backendName(); }
  int64_t bucketCount() const override { return reducer_.bucketCount(); }

  SamplerOptions shard(SamplerOptions sampler, bool evenShards) const override;
  void beforeMicroBatch(bool firstOfGroup, bool lastOfGroup) override;
  void finishGradients() override { reducer_.finishGradients(); }
  StepAgreement agree(const StepAgreement& local) override;
  bool stopNow(bool agreedAtLastStep, bool /*requestedHere*/) const override { return agreedAtLastStep; }
  std::vector<double> sumOverRanks(const std::vector<double>& values, const std::string& what) override;
  void sumInPlace(const std::vector<at::Tensor>& tensors, const std::string& what) override;
  void postFailure(const std::string& message) override { group_->postFailure(message); }
  std::function<bool(const at::Tensor&)> optimizerStateOwnership() const override;
  void afterOptimizerStep() override;
  void gatherOptimizerState(std::vector<OptimizerUnit>& units) override;

 private:
  std::shared_ptr<DistributedGroup> group_;
  Model& model_;
  c10::Device device_;
  bool broadcastBuffers_;
  GradientReducer reducer_;
  std::optional<OptimizerSharding> sharding_;  // config.distributed.zeroRedundancyOptimizer
};

}  // namespace firebrand

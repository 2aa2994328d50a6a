// ZeRO stage 1 (torch.distributed.optim.ZeroRedundancyOptimizer): each rank
// holds the optimizer state of a share of the parameters and steps those
// only, after gradients were averaged as in DDP; the new values then go from
// each parameter's owner to every rank. Per-rank optimizer memory falls as
// 1/worldSize; the weights are DDP's. For a checkpoint, rank 0 gathers every
// share, so that the saved state is whole (loadable at any world size, with
// or without sharding).
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/distributed/distributed_group.h"
#include "core/optim/optimizer_unit.h"

namespace firebrand {

class OptimizerSharding {
 public:
  // Shares out `parameters` (all of the model's, frozen too, so that unfreezing moves no state) as
  // ZeroRedundancyOptimizer does: largest first, each to the rank with the fewest elements so far.
  OptimizerSharding(std::shared_ptr<DistributedGroup> group, const std::vector<at::Tensor>& parameters);

  // Whether this rank holds and updates `parameter`'s optimizer state.
  std::function<bool(const at::Tensor&)> ownership() const;
  // After every rank stepped its share: each trainable parameter's new values from its owner.
  void shareUpdatedParameters();
  // Every rank's state of `units` added to rank 0's (a collective: every rank calls it).
  void gatherStateOnRankZero(std::vector<OptimizerUnit>& units);

 private:
  std::shared_ptr<DistributedGroup> group_;
  std::vector<at::Tensor> parameters_;
  std::vector<int64_t> owners_;  // per parameter
  std::shared_ptr<const std::unordered_map<const c10::TensorImpl*, int64_t>> ownerOf_;
};

}  // namespace firebrand

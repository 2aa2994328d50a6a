// What one training step needs from the other ranks of a run. The base class
// is the run of one process: every sum is the rank's own value, nothing is
// sent. DataParallel (data_parallel.h) is the many-process one. The training
// loop calls the same methods in both cases, as it does for GradScaler and
// autocast when they are off.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/data/batch_sampler.h"
#include "core/optim/optimizer_unit.h"

namespace firebrand {

// A step's figures as every rank must see them, so that all take the same decisions.
struct StepAgreement {
  double lossSum = 0;     // the accumulation group's loss, each micro-batch's weighted by lossWeight
  double lossWeight = 0;  // the group's counted targets (class-index losses) or samples
  int64_t samples = 0;    // the group's samples
  bool stop = false;      // a stop was requested
};

class RankReducer {
 public:
  virtual ~RankReducer() = default;

  virtual int64_t rank() const { return 0; }
  virtual int64_t worldSize() const { return 1; }
  virtual const std::string& backendName() const;
  virtual int64_t bucketCount() const { return 0; }

  // This rank's part of an epoch: padded to equal shards for training (as
  // DistributedSampler), or every sample once (`evenShards` false, evaluation).
  virtual SamplerOptions shard(SamplerOptions sampler, bool /*evenShards*/) const { return sampler; }
  // Before each micro-batch's forward and backward.
  virtual void beforeMicroBatch(bool /*firstOfGroup*/, bool /*lastOfGroup*/) {}
  // After the accumulation group's last backward: the mean gradients are in .grad.
  virtual void finishGradients() {}
  // The step's figures summed over the ranks (stop: any rank's).
  virtual StepAgreement agree(const StepAgreement& local) { return local; }
  // Whether training stops now, between two steps: one rank stops as soon as
  // it is asked to; ranks stop together, after the step whose agreement said so.
  virtual bool stopNow(bool /*agreedAtLastStep*/, bool requestedHere) const { return requestedHere; }
  // Sums `values` over the ranks in one collective.
  virtual std::vector<double> sumOverRanks(const std::vector<double>& values, const std::string& /*what*/) {
    return values;
  }
  // Sums each tensor in place over the ranks.
  virtual void sumInPlace(const std::vector<at::Tensor>& /*tensors*/, const std::string& /*what*/) {}
  // With the optimizer state sharded (ZeRO-1): which parameters' state this rank holds; empty otherwise.
  virtual std::function<bool(const at::Tensor&)> optimizerStateOwnership() const { return {}; }
  // After the optimizers stepped their shares: every rank gets the parameters others updated.
  virtual void afterOptimizerStep() {}
  // Before rank 0 saves the optimizers: their whole state gathered there (a collective when sharded).
  virtual void gatherOptimizerState(std::vector<OptimizerUnit>& /*units*/) {}
  // Tells the other ranks that this one failed (DistributedGroup::postFailure).
  virtual void postFailure(const std::string& /*message*/) {}
};

}  // namespace firebrand

#include "core/distributed/data_parallel.h"

#include <ATen/ATen.h>

#include "core/errors.h"
#include "core/nn/sync_batch_norm.h"

namespace firebrand {
namespace {

std::vector<at::Tensor> trainableParameters(const Model& model) {
  std::vector<at::Tensor> trainable;
  for (const auto& parameter : model.parameters()) {
    if (parameter.requires_grad()) trainable.push_back(parameter);
  }
  return trainable;
}

std::vector<at::Tensor> buffersOf(const Model& model) {
  std::vector<at::Tensor> buffers;
  for (const auto& item : model.namedBuffers()) buffers.push_back(item.value());
  return buffers;
}

std::shared_ptr<DistributedGroup> joinWithRankZeroWeights(const DistributedOptions& options, Model& model,
                                                          const c10::Device& device) {
  auto group = DistributedGroup::join(options, device);
  std::vector<at::Tensor> state = model.parameters();
  const auto buffers = buffersOf(model);
  state.insert(state.end(), buffers.begin(), buffers.end());
  group->broadcast(0, state, "the initial parameters and buffers");
  return group;
}

// Every SyncBatchNorm layer sums its statistics over the group's ranks (weakly held: a model that
// outlives the run fails, naming it, rather than reach a group that is gone).
void synchronizeBatchNorms(Model& model, const std::shared_ptr<DistributedGroup>& group) {
  const std::weak_ptr<DistributedGroup> weak = group;
  const RankSum rankSum = [weak](at::Tensor& tensor) {
    const auto locked = weak.lock();
    if (!locked) throw InvalidState("syncBatchNorm: the distributed run it trained in has ended");
    locked->allReduceSum(tensor, "the batch statistics of a syncBatchNorm");
  };
  for (const auto& [path, layer] : model.builtLayers()) {
    if (auto* norm = dynamic_cast<SyncBatchNormImpl*>(layer->module.ptr().get())) norm->synchronize(rankSum);
  }
}

}  // namespace

DataParallel::DataParallel(const DistributedOptions& options, Model& model, const c10::Device& device)
    : group_(joinWithRankZeroWeights(options, model, device)),
      model_(model),
      device_(device),
      broadcastBuffers_(options.broadcastBuffers && !buffersOf(model).empty()),
      reducer_(group_, trainableParameters(model), options.bucketCapBytes) {
  if (options.zeroRedundancyOptimizer) sharding_.emplace(group_, model.parameters());
  synchronizeBatchNorms(model, group_);
}

SamplerOptions DataParallel::shard(SamplerOptions sampler, bool evenShards) const {
  sampler.rank = rank();
  sampler.worldSize = worldSize();
  sampler.evenShards = evenShards;
  return sampler;
}

void DataParallel::beforeMicroBatch(bool firstOfGroup, bool lastOfGroup) {
  if (firstOfGroup && broadcastBuffers_) group_->broadcast(0, buffersOf(model_), "the buffers");
  reducer_.prepareBackward(lastOfGroup);
}

StepAgreement DataParallel::agree(const StepAgreement& local) {
  const std::vector<double> sums = sumOverRanks(
      {local.lossSum, local.lossWeight, static_cast<double>(local.samples), local.stop ? 1.0 : 0.0}, "the step's loss");
  return {sums[0], sums[1], static_cast<int64_t>(sums[2]), sums[3] > 0};
}

std::vector<double> DataParallel::sumOverRanks(const std::vector<double>& values, const std::string& what) {
  at::Tensor sums = at::tensor(values, at::TensorOptions().dtype(at::kDouble)).to(device_);
  group_->allReduceSum(sums, what);
  sums = sums.cpu();
  return std::vector<double>(sums.data_ptr<double>(), sums.data_ptr<double>() + sums.numel());
}

void DataParallel::sumInPlace(const std::vector<at::Tensor>& tensors, const std::string& what) {
  for (at::Tensor tensor : tensors) group_->allReduceSum(tensor, what);
}

std::function<bool(const at::Tensor&)> DataParallel::optimizerStateOwnership() const {
  return sharding_ ? sharding_->ownership() : nullptr;
}

void DataParallel::afterOptimizerStep() {
  if (sharding_) sharding_->shareUpdatedParameters();
}

void DataParallel::gatherOptimizerState(std::vector<OptimizerUnit>& units) {
  if (sharding_) sharding_->gatherStateOnRankZero(units);
}

}  // namespace firebrand

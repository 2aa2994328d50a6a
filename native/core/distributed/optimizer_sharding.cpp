#include "core/distributed/optimizer_sharding.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>

namespace firebrand {

OptimizerSharding::OptimizerSharding(std::shared_ptr<DistributedGroup> group, const std::vector<at::Tensor>& parameters)
    : group_(std::move(group)), parameters_(parameters), owners_(parameters.size(), 0) {
  std::vector<size_t> order(parameters.size());
  std::iota(order.begin(), order.end(), 0);
  // Stable: ties keep registration order, the same on every rank.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return parameters[a].numel() > parameters[b].numel(); });
  std::vector<int64_t> elements(static_cast<size_t>(group_->worldSize()), 0);
  auto ownerOf = std::make_shared<std::unordered_map<const c10::TensorImpl*, int64_t>>();
  for (const size_t index : order) {
    const auto least = std::min_element(elements.begin(), elements.end());
    owners_[index] = least - elements.begin();
    *least += parameters[index].numel();
    (*ownerOf)[parameters[index].unsafeGetTensorImpl()] = owners_[index];
  }
  ownerOf_ = std::move(ownerOf);
}

std::function<bool(const at::Tensor&)> OptimizerSharding::ownership() const {
  const int64_t rank = group_->rank();
  return [ownerOf = ownerOf_, rank](const at::Tensor& parameter) {
    const auto it = ownerOf->find(parameter.unsafeGetTensorImpl());
    return it != ownerOf->end() && it->second == rank;
  };
}

void OptimizerSharding::shareUpdatedParameters() {
  for (int64_t owner = 0; owner < group_->worldSize(); ++owner) {
    std::vector<at::Tensor> owned;
    for (size_t i = 0; i < parameters_.size(); ++i) {
      if (owners_[i] == owner && parameters_[i].requires_grad()) owned.push_back(parameters_[i]);
    }
    if (!owned.empty()) group_->broadcast(owner, owned, "the parameters rank " + std::to_string(owner) + " updated");
  }
}

void OptimizerSharding::gatherStateOnRankZero(std::vector<OptimizerUnit>& units) {
  const int64_t rank = group_->rank();
  // Collectives take tensors where the group's backend works (NCCL: the GPU the parameters are on).
  const c10::Device device = parameters_.empty() ? c10::Device(c10::kCPU) : parameters_.front().device();
  for (auto& unit : units) {
    const std::string own = rank == 0 ? std::string() : unit.stateArchive();
    // Each rank's archive length in its own slot, summed: every rank learns every length.
    at::Tensor lengths = at::zeros({group_->worldSize()}, at::TensorOptions().dtype(at::kLong));
    lengths[rank] = static_cast<int64_t>(own.size());
    lengths = lengths.to(device);
    group_->allReduceSum(lengths, "the lengths of the optimizer state's shares");
    lengths = lengths.cpu();
    for (int64_t sender = 1; sender < group_->worldSize(); ++sender) {
      at::Tensor bytes = at::empty({lengths[sender].item<int64_t>()}, at::TensorOptions().dtype(at::kByte));
      if (sender == rank) std::copy(own.begin(), own.end(), reinterpret_cast<char*>(bytes.data_ptr()));
      bytes = bytes.to(device);
      group_->broadcast(sender, {bytes}, "the optimizer state held by rank " + std::to_string(sender));
      if (rank != 0) continue;
      bytes = bytes.cpu();
      unit.addStateArchive(std::string(reinterpret_cast<const char*>(bytes.data_ptr()), bytes.numel()));
    }
  }
}

}  // namespace firebrand

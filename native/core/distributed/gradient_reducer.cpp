#include "core/distributed/gradient_reducer.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "core/compat/grad_accumulator.h"

namespace firebrand {

constexpr int64_t kFirstBucketCapBytes = 1024 * 1024;

struct GradientReducer::Hook {
  compat::GradAccumulator accumulator;
  uintptr_t key;
};

struct GradientReducer::State {
  struct Bucket {
    std::vector<size_t> parameters;  // indices into `parameters`
    std::vector<int64_t> offsets;    // of each in `flat`
    at::Tensor flat;
    size_t pending = 0;
    c10::intrusive_ptr<c10d::Work> work;
  };
  std::shared_ptr<DistributedGroup> group;
  std::vector<at::Tensor> parameters;
  std::vector<size_t> bucketOf;  // per parameter
  std::vector<size_t> slotOf;    // per parameter: its place in its bucket
  std::vector<bool> ready;       // per parameter, this step
  std::vector<Bucket> buckets;
  size_t nextToStart = 0;
  bool armed = false;
  std::mutex mutex;

  void copyIn(size_t parameter) {
    Bucket& bucket = buckets[bucketOf[parameter]];
    at::Tensor target = bucket.flat.narrow(0, bucket.offsets[slotOf[parameter]], parameters[parameter].numel());
    const at::Tensor& grad = parameters[parameter].grad();
    if (grad.defined()) {
      target.copy_(grad.reshape({-1}));
    } else {
      target.zero_();
    }
  }

  // Starts every bucket that is complete and next in order.
  void startReadyBuckets() {
    while (nextToStart < buckets.size() && buckets[nextToStart].pending == 0) {
      Bucket& bucket = buckets[nextToStart++];
      // Dividing first keeps the sum in range, as DDP's gradient predivide.
      bucket.flat.div_(static_cast<double>(group->worldSize()));
      bucket.work = group->startAllReduce(bucket.flat);
    }
  }

  void markReady(size_t parameter) {
    if (ready[parameter]) return;
    ready[parameter] = true;
    copyIn(parameter);
    --buckets[bucketOf[parameter]].pending;
    startReadyBuckets();
  }

  void reset() {
    std::fill(ready.begin(), ready.end(), false);
    for (auto& bucket : buckets) {
      bucket.pending = bucket.parameters.size();
      bucket.work.reset();
    }
    nextToStart = 0;
  }
};

GradientReducer::GradientReducer(std::shared_ptr<DistributedGroup> group, const std::vector<at::Tensor>& parameters,
                                 int64_t bucketCapBytes)
    : state_(std::make_shared<State>()) {
  State& state = *state_;
  state.group = std::move(group);
  state.parameters = parameters;
  state.bucketOf.assign(parameters.size(), 0);
  state.slotOf.assign(parameters.size(), 0);
  state.ready.assign(parameters.size(), false);
  // Reverse order, one open bucket per (dtype, device): a bucket is one flat tensor.
  std::map<std::pair<at::ScalarType, std::string>, size_t> open;
  std::vector<int64_t> bytes;
  std::vector<int64_t> caps;
  for (size_t i = parameters.size(); i-- > 0;) {
    const at::Tensor& parameter = parameters[i];
    const auto key = std::make_pair(parameter.scalar_type(), parameter.device().str());
    auto it = open.find(key);
    if (it == open.end() || bytes[it->second] >= caps[it->second]) {
      caps.push_back(state.buckets.empty() ? std::min(kFirstBucketCapBytes, bucketCapBytes) : bucketCapBytes);
      state.buckets.emplace_back();
      bytes.push_back(0);
      it = open.insert_or_assign(key, state.buckets.size() - 1).first;
    }
    State::Bucket& bucket = state.buckets[it->second];
    bucket.offsets.push_back(bytes[it->second] / static_cast<int64_t>(parameter.element_size()));
    state.slotOf[i] = bucket.parameters.size();
    bucket.parameters.push_back(i);
    bytes[it->second] += parameter.numel() * static_cast<int64_t>(parameter.element_size());
    state.bucketOf[i] = it->second;
  }
  for (size_t b = 0; b < state.buckets.size(); ++b) {
    State::Bucket& bucket = state.buckets[b];
    const at::Tensor& first = parameters[bucket.parameters.front()];
    bucket.flat = at::zeros({bytes[b] / static_cast<int64_t>(first.element_size())}, first.options());
  }
  state.reset();
  // The hooks hold the state weakly: one running while the reducer goes does nothing.
  const std::weak_ptr<State> weak = state_;
  for (size_t i = 0; i < parameters.size(); ++i) {
    compat::GradAccumulator accumulator = torch::autograd::impl::grad_accumulator(parameters[i]);
    const uintptr_t key = accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [weak, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          if (auto locked = weak.lock()) {
            const std::lock_guard<std::mutex> lock(locked->mutex);
            if (locked->armed) locked->markReady(i);
          }
          return outputs;
        }));
    hooks_.push_back({std::move(accumulator), key});
  }
}

GradientReducer::~GradientReducer() {
  for (const Hook& hook : hooks_) hook.accumulator->del_post_hook(hook.key);
}

int64_t GradientReducer::bucketCount() const { return static_cast<int64_t>(state_->buckets.size()); }

void GradientReducer::prepareBackward(bool reduce) {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  state_->armed = reduce;
}

void GradientReducer::finishGradients() {
  State& state = *state_;
  {
    const std::lock_guard<std::mutex> lock(state.mutex);
    state.armed = false;
    for (size_t i = 0; i < state.parameters.size(); ++i) {
      if (state.ready[i]) continue;
      state.ready[i] = true;
      state.copyIn(i);
      --state.buckets[state.bucketOf[i]].pending;
    }
    state.startReadyBuckets();
  }
  try {
    for (auto& bucket : state.buckets) {
      state.group->wait(bucket.work, "the gradients");
      for (size_t slot = 0; slot < bucket.parameters.size(); ++slot) {
        at::Tensor& parameter = state.parameters[bucket.parameters[slot]];
        const at::Tensor mean = bucket.flat.narrow(0, bucket.offsets[slot], parameter.numel()).view_as(parameter);
        at::Tensor& grad = parameter.mutable_grad();
        if (grad.defined()) {
          grad.copy_(mean);
        } else {
          grad = mean.clone();
        }
      }
    }
  } catch (...) {
    state.reset();
    throw;
  }
  state.reset();
}

}  // namespace firebrand

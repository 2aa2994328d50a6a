#include "core/nn/sync_batch_norm.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/custom_class_detail.h>

#include "core/errors.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

// The sum in an autograd node's saved data (an IValue holds a capsule, not a std::function).
struct RankSumHolder : torch::CustomClassHolder {
  explicit RankSumHolder(RankSum sum) : sum(std::move(sum)) {}
  RankSum sum;
};

// A sum over the ranks whose backward is the same sum of the gradients: each rank's input reaches every
// rank's output. Every rank's backward takes part (autograd gives zeros where an output got no gradient).
struct SumOverRanks : public torch::autograd::Function<SumOverRanks> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& local, const RankSum& rankSum) {
    ctx->saved_data["rankSum"] = c10::IValue::make_capsule(c10::make_intrusive<RankSumHolder>(rankSum));
    at::Tensor total = local.detach().clone();
    rankSum(total);
    return total;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto holder = c10::static_intrusive_pointer_cast<RankSumHolder>(ctx->saved_data["rankSum"].toCapsule());
    at::Tensor grad = grads.at(0).detach().clone();
    holder->sum(grad);
    return {grad, at::Tensor()};
  }
};

at::Tensor summedOverRanks(const at::Tensor& local, const RankSum& rankSum) {
  return SumOverRanks::apply(local, rankSum);
}

}  // namespace

SyncBatchNormImpl::SyncBatchNormImpl(torch::nn::BatchNormOptions options_) : options(std::move(options_)) { reset(); }

void SyncBatchNormImpl::reset() {
  const int64_t features = options.num_features();
  if (options.affine()) {
    weight = register_parameter("weight", at::ones({features}));
    bias = register_parameter("bias", at::zeros({features}));
  }
  if (options.track_running_stats()) {
    running_mean = register_buffer("running_mean", at::zeros({features}));
    running_var = register_buffer("running_var", at::ones({features}));
    num_batches_tracked = register_buffer("num_batches_tracked", at::zeros({}, at::kLong));
  }
}

at::Tensor SyncBatchNormImpl::forward(const at::Tensor& input) {
  if (input.dim() < 2 || input.size(1) != options.num_features()) {
    throw ShapeMismatch("syncBatchNorm expects [N, C, *] with C=" + std::to_string(options.num_features()) + ", got " +
                        shapeText(input.sizes().vec()));
  }
  // As torch.nn.BatchNorm: momentum None means a cumulative average.
  double momentum = options.momentum().value_or(0.0);
  if (is_training() && options.track_running_stats()) {
    num_batches_tracked += 1;
    if (!options.momentum()) momentum = 1.0 / num_batches_tracked.item<double>();
  }
  if (rankSum_ && is_training()) return synchronized(input, momentum);
  return at::batch_norm(input, weight, bias, running_mean, running_var, is_training() || !options.track_running_stats(),
                        momentum, options.eps(), at::globalContext().userEnabledCuDNN());
}

at::Tensor SyncBatchNormImpl::synchronized(const at::Tensor& input, double momentum) {
  std::vector<int64_t> dims;  // all but the channels
  for (int64_t d = 0; d < input.dim(); ++d) {
    if (d != 1) dims.push_back(d);
  }
  std::vector<int64_t> channels(static_cast<size_t>(input.dim()), 1);
  channels[1] = -1;
  // Two passes, as one process's batch norm: the global mean, then the global sum of squares about it.
  const at::Tensor count = at::full({1}, static_cast<double>(input.numel() / input.size(1)), input.options());
  const at::Tensor countAndSums = summedOverRanks(at::cat({count, input.sum(dims)}), rankSum_);
  const double total = countAndSums[0].item<double>();
  if (total <= 1) {
    throw InvalidArgument("syncBatchNorm: expected more than 1 value per channel over the ranks' batches, got " +
                          std::to_string(static_cast<int64_t>(total)));
  }
  const at::Tensor mean = countAndSums.narrow(0, 1, options.num_features()) / total;
  const at::Tensor centered = input - mean.view(channels);
  const at::Tensor variance = summedOverRanks(centered.pow(2).sum(dims), rankSum_) / total;
  at::Tensor output = centered * at::rsqrt(variance + options.eps()).view(channels);
  if (options.affine()) output = output * weight.view(channels) + bias.view(channels);
  if (options.track_running_stats()) {
    at::NoGradGuard noGrad;
    running_mean.mul_(1 - momentum).add_(mean.detach(), momentum);
    running_var.mul_(1 - momentum).add_(variance.detach() * (total / (total - 1)), momentum);
  }
  return output;
}

}  // namespace firebrand

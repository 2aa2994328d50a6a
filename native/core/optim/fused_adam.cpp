#include "core/optim/fused_adam.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <optional>
#include <type_traits>

#include "core/optim/adam_update.h"
#include "core/optim/kernel_rounding.h"

namespace firebrand {
namespace {

template <typename Options>
constexpr bool kDecoupled = std::is_same_v<Options, torch::optim::AdamWOptions>;

template <typename T>
std::optional<bool> roundsOnce() {
  // Adam's two kinds of x + a * y must round alike for the one-pass update to match.
  if (libtorchAddRoundsOnce<T>() != libtorchAddcmulRoundsOnce<T>()) return std::nullopt;
  return libtorchAddRoundsOnce<T>();
}

template <typename Options>
AdamCoefficients coefficientsOf(const Options& options, int64_t step, bool roundOnce) {
  AdamCoefficients coefficients;
  coefficients.lr = options.lr();
  coefficients.beta1 = std::get<0>(options.betas());
  coefficients.beta2 = std::get<1>(options.betas());
  coefficients.eps = options.eps();
  coefficients.weightDecay = options.weight_decay();
  if (options.weight_decay() != 0) {
    coefficients.decay = kDecoupled<Options> ? AdamWeightDecay::Decoupled : AdamWeightDecay::L2;
  }
  coefficients.amsgrad = options.amsgrad();
  coefficients.step = step;
  coefficients.roundOnce = roundOnce;
  return coefficients;
}

template <typename T>
void update(const at::Tensor& parameter, const at::Tensor& grad, const at::Tensor& expAvg, const at::Tensor& expAvgSq,
            const at::Tensor& maxExpAvgSq, const AdamCoefficients& coefficients) {
  AdamSlice<T> slice;
  slice.parameter = parameter.data_ptr<T>();
  slice.grad = grad.data_ptr<T>();
  slice.expAvg = expAvg.data_ptr<T>();
  slice.expAvgSq = expAvgSq.data_ptr<T>();
  slice.maxExpAvgSq = coefficients.amsgrad ? maxExpAvgSq.data_ptr<T>() : nullptr;
  slice.size = parameter.numel();
  adamUpdate(slice, coefficients);
}

void updateAny(const at::Tensor& parameter, const at::Tensor& grad, const at::Tensor& expAvg,
               const at::Tensor& expAvgSq, const at::Tensor& maxExpAvgSq, const AdamCoefficients& coefficients) {
  if (parameter.scalar_type() == at::kFloat) {
    update<float>(parameter, grad, expAvg, expAvgSq, maxExpAvgSq, coefficients);
  } else {
    update<double>(parameter, grad, expAvg, expAvgSq, maxExpAvgSq, coefficients);
  }
}

// Three steps of libtorch's optimizer and of the one-pass update, from the same
// random start with every option on (weight decay, amsgrad or not), over an
// odd number of elements (vector body and tail): the same bits or not.
template <typename Base, typename Options>
bool agreesWithLibtorch(at::ScalarType dtype, bool roundOnce) {
  at::NoGradGuard noGrad;
  at::Generator generator = at::detail::createCPUGenerator(20261123);
  const auto random = [&] { return at::randn({1003}, generator, at::TensorOptions().dtype(dtype)); };
  for (const bool amsgrad : {false, true}) {
    const Options options = Options(0.01).betas({0.8, 0.9}).eps(1e-3).weight_decay(0.1).amsgrad(amsgrad);
    at::Tensor reference = random().requires_grad_();
    at::Tensor parameter = reference.detach().clone();
    at::Tensor expAvg = at::zeros_like(parameter);
    at::Tensor expAvgSq = at::zeros_like(parameter);
    at::Tensor maxExpAvgSq = at::zeros_like(parameter);
    Base libtorch(std::vector<at::Tensor>{reference}, options);
    for (int64_t step = 1; step <= 3; ++step) {
      const at::Tensor grad = random();
      reference.mutable_grad() = grad.clone();
      libtorch.step();
      updateAny(parameter, grad, expAvg, expAvgSq, maxExpAvgSq, coefficientsOf(options, step, roundOnce));
    }
    if (!at::equal(reference.detach(), parameter)) return false;
  }
  return true;
}

// Whether the one-pass update may run for parameters of `dtype`; how it rounds if so.
template <typename Base, typename Options>
std::optional<bool> fusedRounding(at::ScalarType dtype) {
  const auto check = [](at::ScalarType type, std::optional<bool> once) -> std::optional<bool> {
    if (!once || !agreesWithLibtorch<Base, Options>(type, *once)) return std::nullopt;
    return once;
  };
  static const std::optional<bool> forFloat = check(at::kFloat, roundsOnce<float>());
  static const std::optional<bool> forDouble = check(at::kDouble, roundsOnce<double>());
  return dtype == at::kFloat ? forFloat : forDouble;
}

}  // namespace

template <typename Base, typename Options, typename State>
bool FusedAdamFamily<Base, Options, State>::fusesFor(at::ScalarType dtype) {
  return (dtype == at::kFloat || dtype == at::kDouble) && fusedRounding<Base, Options>(dtype).has_value();
}

template <typename Base, typename Options, typename State>
bool FusedAdamFamily<Base, Options, State>::planUpdates() {
  updates_.clear();
  for (auto& group : this->param_groups()) {
    const auto& options = static_cast<const Options&>(group.options());
    for (const auto& parameter : group.params()) {
      const at::Tensor& grad = parameter.grad();
      if (!grad.defined()) continue;
      if (!sameDenseCpuMemory(parameter, grad)) return false;
      if (!fusesFor(parameter.scalar_type())) return false;
      State* state = nullptr;
      const auto entry = this->state().find(keys_.of(parameter));
      if (entry != this->state().end()) {
        state = static_cast<State*>(entry->second.get());
        const bool laidOut =
            state->exp_avg().defined() && state->exp_avg_sq().defined() &&
            sameDenseCpuMemory(parameter, state->exp_avg()) && sameDenseCpuMemory(parameter, state->exp_avg_sq()) &&
            (!options.amsgrad() ||
             (state->max_exp_avg_sq().defined() && sameDenseCpuMemory(parameter, state->max_exp_avg_sq())));
        if (!laidOut) return false;
      }
      updates_.push_back({&parameter, &grad, &options, state});
    }
  }
  return true;
}

template <typename Base, typename Options, typename State>
State& FusedAdamFamily<Base, Options, State>::stateOf(const at::Tensor& parameter, bool amsgrad) {
  // Looked up again: a parameter listed twice got its state from its first update.
  auto& entry = this->state()[keys_.of(parameter)];
  if (entry == nullptr) {
    auto fresh = std::make_unique<State>();
    fresh->step(0);
    fresh->exp_avg(at::zeros_like(parameter, at::MemoryFormat::Preserve));
    fresh->exp_avg_sq(at::zeros_like(parameter, at::MemoryFormat::Preserve));
    if (amsgrad) fresh->max_exp_avg_sq(at::zeros_like(parameter, at::MemoryFormat::Preserve));
    entry = std::move(fresh);
  }
  return static_cast<State&>(*entry);
}

template <typename Base, typename Options, typename State>
void FusedAdamFamily<Base, Options, State>::makeState(const std::function<bool(const at::Tensor&)>& wanted) {
  at::NoGradGuard noGrad;
  for (auto& group : this->param_groups()) {
    const bool amsgrad = static_cast<const Options&>(group.options()).amsgrad();
    for (const auto& parameter : group.params()) {
      if (parameter.requires_grad() && wanted(parameter)) stateOf(parameter, amsgrad);
    }
  }
}

template <typename Base, typename Options, typename State>
at::Tensor FusedAdamFamily<Base, Options, State>::step(typename Base::LossClosure closure) {
  // A closure computes the gradients, which must be checked after it runs: libtorch's step runs it.
  if (closure != nullptr || !planUpdates()) return Base::step(std::move(closure));
  at::NoGradGuard noGrad;
  for (const PendingUpdate& pending : updates_) {
    const Options& options = *pending.options;
    State& state = pending.state != nullptr ? *pending.state : stateOf(*pending.parameter, options.amsgrad());
    state.step(state.step() + 1);
    const bool roundOnce = *fusedRounding<Base, Options>(pending.parameter->scalar_type());
    updateAny(*pending.parameter, *pending.grad, state.exp_avg(), state.exp_avg_sq(), state.max_exp_avg_sq(),
              coefficientsOf(options, state.step(), roundOnce));
    // As an in-place op would: autograd refuses a changed tensor it saved.
    pending.parameter->unsafeGetTensorImpl()->bump_version();
  }
  return {};
}

template class FusedAdamFamily<torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState>;
template class FusedAdamFamily<torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState>;

}  // namespace firebrand

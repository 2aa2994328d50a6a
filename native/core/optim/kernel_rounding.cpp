#include "core/optim/kernel_rounding.h"

#include <ATen/ATen.h>

#include <cmath>

namespace firebrand {
namespace {

// With b = 1 + 2^-e, b * b = 1 + 2^(1-e) + 2^-2e exactly, whose last term is
// under half of T's unit in the last place: rounding the product to T first
// loses it, a fused multiply-add keeps it, so -(1 + 2^(1-e)) + b * b is 0 or not.
template <typename T>
struct Probe {
  static constexpr int kExponent = std::is_same_v<T, float> ? 13 : 27;
  static T factor() { return T(1) + std::ldexp(T(1), -kExponent); }
  static at::Tensor filled(T value) { return at::full({1}, value, at::CppTypeToScalarType<T>::value); }
  static at::Tensor sum() { return filled(-(T(1) + std::ldexp(T(1), 1 - kExponent))); }
};

}  // namespace

template <typename T>
bool libtorchAddRoundsOnce() {
  static const bool once = [] {
    at::Tensor sum = Probe<T>::sum();
    sum.add_(Probe<T>::filled(Probe<T>::factor()), Probe<T>::factor());
    return sum.template item<T>() != 0;
  }();
  return once;
}

template <typename T>
bool libtorchAddcmulRoundsOnce() {
  static const bool once = [] {
    at::Tensor sum = Probe<T>::sum();
    sum.addcmul_(Probe<T>::filled(Probe<T>::factor()), Probe<T>::filled(Probe<T>::factor()), 1);
    return sum.template item<T>() != 0;
  }();
  return once;
}

template bool libtorchAddRoundsOnce<float>();
template bool libtorchAddRoundsOnce<double>();
template bool libtorchAddcmulRoundsOnce<float>();
template bool libtorchAddcmulRoundsOnce<double>();

}  // namespace firebrand

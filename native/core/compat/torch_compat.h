// Every difference between the libtorch versions firebrand builds against
// (Debian's 1.13 and 2.x wheels) lives here, keyed on TORCH_VERSION_MAJOR/MINOR;
// where PyTorch's own algorithm changed (trunc_normal_ in 2.12), the file that
// holds it keys on FIREBRAND_TORCH_AT_LEAST (nn/trunc_normal.cpp).
#pragma once
#include <ATen/autocast_mode.h>
#include <c10/core/Allocator.h>
#include <torch/optim/optimizer.h>
#include <torch/version.h>

#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>

// c10::variant, which libtorch used until 2.1 (variantAlternative).
#if __has_include(<c10/util/variant.h>)
#include <c10/util/variant.h>
#endif

#define FIREBRAND_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

#if FIREBRAND_TORCH_AT_LEAST(2, 1)
#include <ATen/ops/scaled_dot_product_attention.h>
#endif

namespace c10d {
class ProcessGroup;
class Backend;
}  // namespace c10d

namespace firebrand::compat {

// The type whose collectives ProcessGroupGloo and ProcessGroupNCCL implement:
// 2.0 moved them from ProcessGroup to Backend (a ProcessGroup now dispatches to Backends).
#if FIREBRAND_TORCH_AT_LEAST(2, 0)
using CollectiveBackend = c10d::Backend;
#else
using CollectiveBackend = c10d::ProcessGroup;
#endif

// Frees gradients instead of filling them with zeros (PyTorch's set_to_none).
// Not Optimizer::zero_grad: 1.13's has no set_to_none, and 2.14's detaches
// each gradient in place first, which fails on a gradient that is a view (as
// autograd::grad returns for several optimizers' losses).
inline void zeroGradToNone(torch::optim::Optimizer& optimizer) {
  for (auto& group : optimizer.param_groups()) {
    for (auto& parameter : group.params()) {
      parameter.mutable_grad().reset();
    }
  }
}

// The key of a parameter's entry in an optimizer's state(): 1.13 keys it by
// the address of the parameter's TensorImpl printed as text, 2.x by the address.
using OptimizerStateKey = typename std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;

// (A template so that only the branch of the version built against is compiled.)
template <typename Key = OptimizerStateKey>
Key optimizerStateKey(const at::Tensor& parameter) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream text;  // as c10::guts::to_string writes it
    text << parameter.unsafeGetTensorImpl();
    return text.str();
  } else {
    return static_cast<Key>(parameter.unsafeGetTensorImpl());
  }
}

// The alternative of a libtorch option variant (conv padding, ...), or null:
// libtorch used c10::variant until 2.1 and std::variant since.
template <typename T, typename Variant>
const T* variantAlternative(const Variant& variant) {
#if FIREBRAND_TORCH_AT_LEAST(2, 1)
  return std::get_if<T>(&variant);
#else
  return c10::get_if<T>(&variant);
#endif
}

// Autocast on/off and its dtype for one device type, on the calling thread.
// 2.4 replaced the per-backend functions (set_cpu_enabled, ...) with ones
// taking the device type.
inline void setAutocast(c10::DeviceType device, bool enabled, at::ScalarType dtype) {
#if FIREBRAND_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_enabled(device, enabled);
  at::autocast::set_autocast_dtype(device, dtype);
#else
  if (device == c10::DeviceType::CUDA) {
    at::autocast::set_enabled(enabled);
    at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    at::autocast::set_cpu_enabled(enabled);
    at::autocast::set_autocast_cpu_dtype(dtype);
  }
#endif
}

inline bool autocastEnabled(c10::DeviceType device) {
#if FIREBRAND_TORCH_AT_LEAST(2, 4)
  return at::autocast::is_autocast_enabled(device);
#else
  return device == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

inline at::ScalarType autocastDtype(c10::DeviceType device) {
#if FIREBRAND_TORCH_AT_LEAST(2, 4)
  return at::autocast::get_autocast_dtype(device);
#else
  return device == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                         : at::autocast::get_autocast_cpu_dtype();
#endif
}

// PyTorch's own scaled_dot_product_attention without dropout (its fused CPU kernel where the inputs
// allow, its math otherwise), or nullopt where the version has none that takes a scale (before 2.1).
inline std::optional<at::Tensor> fusedAttention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                                const c10::optional<at::Tensor>& mask, bool isCausal,
                                                std::optional<double> scale) {
#if FIREBRAND_TORCH_AT_LEAST(2, 1)
  return at::scaled_dot_product_attention(query, key, value, mask, 0.0, isCausal,
                                          scale ? c10::optional<double>(*scale) : c10::nullopt);
#else
  return std::nullopt;
#endif
}

// c10::Allocator: allocate() is const in 1.13 and not in 2.x, where copy_data
// is pure virtual too. An allocator derives from AllocatorAdapter<> and
// defines allocateData; the adapter, a template, is checked only for the
// version built against. (Detected, not keyed on a version number.)
template <typename Member>
struct IsConstMember : std::false_type {};
template <typename Result, typename Class, typename... Args>
struct IsConstMember<Result (Class::*)(Args...) const> : std::true_type {};

template <bool ConstAllocate = IsConstMember<decltype(&c10::Allocator::allocate)>::value,
          typename Base = c10::Allocator>
class AllocatorAdapter;

template <typename Base>
class AllocatorAdapter<true, Base> : public Base {
 public:
  virtual c10::DataPtr allocateData(size_t bytes) const = 0;
  c10::DataPtr allocate(size_t bytes) const override { return allocateData(bytes); }
};

template <typename Base>
class AllocatorAdapter<false, Base> : public Base {
 public:
  virtual c10::DataPtr allocateData(size_t bytes) const = 0;
  c10::DataPtr allocate(size_t bytes) override { return allocateData(bytes); }
  void copy_data(void* dest, const void* source, std::size_t count) const override {
    this->default_copy_data(dest, source, count);
  }
};

}  // namespace firebrand::compat

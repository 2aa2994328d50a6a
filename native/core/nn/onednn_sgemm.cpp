#include "core/nn/onednn_sgemm.h"

#include <ATen/ATen.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdint>

#include "core/errors.h"
#include "core/nn/onednn_plain_matmul.h"
#include "core/runtime/kernel_settings.h"

namespace firebrand {
namespace {

// oneDNN's C signature (row-major; dnnl_dim_t is int64_t, the status 0 on success).
using Sgemm = int (*)(char transa, char transb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                      int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

Sgemm sgemm() {
  // Looked up in this library's scope: libtorch's dependencies, libdnnl among them where it is shared.
  static const Sgemm found = kernelSetting("FIREBRAND_ONEDNN_SGEMM") == "0"
                                 ? nullptr
                                 : reinterpret_cast<Sgemm>(dlsym(RTLD_DEFAULT, "dnnl_sgemm"));
  return found;
}

std::atomic<int64_t> productsComputed{0};

// rows [M, K] times weight ([N, K] transposed where `transposed`, else [K, N]) into a new [M, N].
at::Tensor product(const at::Tensor& rows, const at::Tensor& weight, bool transposed, const char* what) {
  const int64_t M = rows.size(0), K = rows.size(1), N = weight.size(transposed ? 0 : 1);
  at::Tensor out = at::empty({M, N}, rows.options());
  const int status = sgemm()('N', transposed ? 'T' : 'N', M, N, K, 1.0f, rows.data_ptr<float>(), K,
                             weight.data_ptr<float>(), weight.size(1), 0.0f, out.data_ptr<float>(), N);
  if (status != 0)
    throw InvalidState(std::string("oneDNN's sgemm failed (status ") + std::to_string(status) + ") computing " + what);
  productsComputed.fetch_add(1, std::memory_order_relaxed);
  return out;
}

}  // namespace

bool onednnSgemmAvailable() { return sgemm() != nullptr; }
int64_t onednnSgemmProducts() { return productsComputed.load(std::memory_order_relaxed); }

at::Tensor onednnTimesTransposed(const at::Tensor& rows, const at::Tensor& weight) {
  at::Tensor out = onednnPlainTimesTransposed(rows, weight);
  return out.defined() ? out : product(rows, weight, true, "a linear layer's output");
}

at::Tensor onednnTimes(const at::Tensor& rows, const at::Tensor& weight) {
  return product(rows, weight, false, "a linear layer's input gradient");
}

}  // namespace firebrand

#include "core/nn/onednn_sgemm.h"

#include <ATen/ATen.h>
#include <dlfcn.h>

#include <cstdint>

#include "core/errors.h"
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

void checked(int status, const char* what) {
  if (status != 0)
    throw InvalidState(std::string("oneDNN's sgemm failed (status ") + std::to_string(status) + ") computing " + what);
}

}  // namespace

bool onednnSgemmAvailable() { return sgemm() != nullptr; }

at::Tensor onednnTimesTransposed(const at::Tensor& rows, const at::Tensor& weight) {
  const int64_t M = rows.size(0), K = rows.size(1), N = weight.size(0);
  at::Tensor out = at::empty({M, N}, rows.options());
  checked(sgemm()('N', 'T', M, N, K, 1.0f, rows.data_ptr<float>(), K, weight.data_ptr<float>(), K, 0.0f,
                  out.data_ptr<float>(), N),
          "a linear layer's output");
  return out;
}

at::Tensor onednnTimes(const at::Tensor& rows, const at::Tensor& weight) {
  const int64_t M = rows.size(0), N = rows.size(1), K = weight.size(1);
  at::Tensor out = at::empty({M, K}, rows.options());
  checked(sgemm()('N', 'N', M, K, N, 1.0f, rows.data_ptr<float>(), N, weight.data_ptr<float>(), K, 0.0f,
                  out.data_ptr<float>(), K),
          "a linear layer's input gradient");
  return out;
}

}  // namespace firebrand

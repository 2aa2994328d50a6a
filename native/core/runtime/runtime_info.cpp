#include "core/runtime/runtime_info.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <torch/cuda.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <atomic>
#include <climits>
#include <cstdlib>

#include "core/errors.h"

namespace firebrand {
namespace {

std::atomic<int> requestedThreads{0};
std::atomic<bool> threadsAdaptive{false};

// An OpenMP entry point, looked up (once, by the callers' statics: they run after every task or pool job):
// a libtorch without OpenMP has none, and null says so.
template <typename Function>
Function openmpFunction(const char* name) {
  return reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
}

std::string resolvedPath(const char* path) {
  char resolved[PATH_MAX];
  return realpath(path, resolved) ? std::string(resolved) : std::string(path);
}

std::string blasVendor(const std::string& library) {
  if (library.find("openblas") != std::string::npos) return "openblas";
  if (library.find("mkl") != std::string::npos) return "mkl";
  if (library.find("blis") != std::string::npos) return "blis";
  if (library.find("atlas") != std::string::npos) return "atlas";
  // Debian's reference BLAS: /usr/lib/<arch>/blas/libblas.so.3
  if (library.find("/blas/libblas") != std::string::npos) return "reference";
  return "unknown";
}

}  // namespace

BlasInfo detectBlas() {
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info info{};
  if (sgemm && dladdr(sgemm, &info) && info.dli_fname) {
    const std::string library = resolvedPath(info.dli_fname);
    using CoreName = char* (*)();
    const auto coreName = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
    const char* core = coreName ? coreName() : nullptr;
    return {blasVendor(library), library, core ? std::string(core) : std::string()};
  }
  // No exported sgemm_: libtorch carries its BLAS inside (pip wheels link MKL statically).
  return {at::hasMKL() ? "mkl" : "unknown", "", ""};
}

// CMake defines these for this file only (see CMakeLists.txt).
#ifndef FIREBRAND_LIBTORCH_SOURCE
#define FIREBRAND_LIBTORCH_SOURCE "unknown"
#define FIREBRAND_TORCH_DIR "unknown"
#define FIREBRAND_TORCH_CUDA 0
#endif

RuntimeInfo runtimeInfo() {
  RuntimeInfo info;
  info.torchVersion = TORCH_VERSION;
  info.cudaAvailable = torch::cuda::is_available();
  info.cudnnAvailable = torch::cuda::cudnn_is_available();
  info.build.torchVersion = TORCH_VERSION;
  info.build.libtorchSource = FIREBRAND_LIBTORCH_SOURCE;
  info.build.torchDir = FIREBRAND_TORCH_DIR;
  info.build.cuda = FIREBRAND_TORCH_CUDA;
  info.build.gloo = FIREBRAND_WITH_GLOO;
  info.build.nccl = FIREBRAND_WITH_NCCL;
  info.cudaDeviceCount = static_cast<int64_t>(torch::cuda::device_count());
  // The JS thread runs kernels on one thread (limitKernelThreadsOfThisThread): its own count is not training's.
  info.numThreads = requestedThreads > 0 ? requestedThreads.load() : at::get_num_threads();
  info.threadsAdaptive = threadsAdaptive;
  info.blas = detectBlas();
  return info;
}

void setNumThreads(int64_t threads, bool adaptive) {
  if (threads < 1) throw InvalidArgument("numThreads must be a positive integer, got " + std::to_string(threads));
  requestedThreads = static_cast<int>(threads);
  threadsAdaptive = adaptive;
  if (!adaptive) at::set_num_threads(static_cast<int>(threads));
}

void useRequestedThreads() {
  const int threads = requestedThreads;
  if (!threadsAdaptive && threads > 0 && at::get_num_threads() != threads) at::set_num_threads(threads);
}

int adaptiveThreads() { return threadsAdaptive ? requestedThreads.load() : 0; }

void limitKernelThreadsOfThisThread() {
  // ATen reads the OpenMP thread count per thread but sets it process-wide in
  // at::set_num_threads; OpenMP's own call changes only this thread's. ATen's
  // lazy per-thread initialisation runs first so it cannot undo this later.
  at::get_num_threads();
  static const auto set = openmpFunction<void (*)(int)>("omp_set_num_threads");
  if (set) set(1);
}

int kernelThreadsOfThisThread() { return at::get_num_threads(); }

void releaseKernelThreadsOfThisThread() {
  // OpenMP 5's omp_pause_resource for the host frees the calling thread's pool (libgomp: gomp_pause_host).
  static const auto initialDevice = openmpFunction<int (*)()>("omp_get_initial_device");
  static const auto pause = openmpFunction<int (*)(int, int)>("omp_pause_resource");
  constexpr int kPauseSoft = 1;  // omp_pause_soft
  if (initialDevice && pause) pause(kPauseSoft, initialDevice());
}

void useDeterministicAlgorithms(bool on) { at::globalContext().setDeterministicAlgorithms(on, /*warn_only=*/false); }

void manualSeed(uint64_t seed) { torch::manual_seed(seed); }

}  // namespace firebrand

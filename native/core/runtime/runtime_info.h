// What the process runs on: libtorch version, BLAS, threads, CUDA. Used to
// warn about slow set-ups (reference BLAS) and by `firebrand doctor`.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace firebrand {

struct BlasInfo {
  // "openblas", "mkl", "blis", "reference", "unknown"
  std::string vendor;
  // The shared object providing sgemm_, when one could be found.
  std::string library;
  // The kernels OpenBLAS chose for this CPU ("SkylakeX", "Haswell"); empty for other BLAS.
  std::string coreType;
};

// How this binary was built (fixed at compile time).
struct BuildInfo {
  std::string torchVersion;    // the libtorch headers it was compiled against
  std::string libtorchSource;  // how CMake found libtorch ("the system libtorch", "LIBTORCH=...", ...)
  std::string torchDir;        // the TorchConfig.cmake folder it used
  bool cuda = false;           // libtorch with CUDA
  bool gloo = false;           // c10d backends compiled in
  bool nccl = false;
};

struct RuntimeInfo {
  std::string torchVersion;
  bool cudaAvailable = false;
  bool cudnnAvailable = false;
  int64_t cudaDeviceCount = 0;
  // Intra-op threads training uses (setNumThreads's count): fixed, or with threadsAdaptive at most
  // this many, chosen while training (ThreadTuner).
  int64_t numThreads = 0;
  bool threadsAdaptive = false;
  BlasInfo blas;
  BuildInfo build;
  // Optimizers whose fused one-pass step runs for float32 CPU parameters here
  // (filled in by whoever knows the optimizers: see fusedOptimizers()).
  std::vector<std::string> fusedOptimizers;
  // Whether frozen float32 linear layers compute through oneDNN's sgemm here (nn/onednn_sgemm.h).
  bool onednnSgemm = false;
  // Products oneDNN's sgemm has computed for them in this process.
  int64_t onednnSgemmProducts = 0;
  // Whether predict's lowered convolutions run as oneDNN 3 primitives of firebrand's (runtime/onednn_api.h).
  bool onednnConvolution = false;
  // Whether predict's lowered linear layers run as packed oneDNN 3 matmuls (graph/onednn_linear.h), and how
  // many products those have computed in this process.
  bool onednnMatmul = false;
  int64_t onednnMatmulProducts = 0;
  // Frozen layers' outputs oneDNN 3's matmul has computed reading their weights in place (nn/onednn_plain_matmul.h).
  int64_t onednnPlainMatmulProducts = 0;
  // Module calls a native decode kernel has run in this process (graph/decode_kernels: decodeKernelSteps()).
  int64_t decodeKernelSteps = 0;
  // Times a trainer's or model's thread ended its kernel threads because another one's task started
  // (binding/task_thread.h), in this process.
  int64_t kernelThreadHandOffs = 0;
};

RuntimeInfo runtimeInfo();
BlasInfo detectBlas();

// Intra-op threads for libtorch's CPU kernels (OpenMP and OpenBLAS share them).
// OpenMP keeps the count per thread, so it is also remembered for the
// threads that run training later (see useRequestedThreads). `adaptive`: at
// most `threads`, chosen while training by measured step time (ThreadTuner).
void setNumThreads(int64_t threads, bool adaptive = false);
// Applies the count from setNumThreads to the calling thread; a thread that
// ran libtorch code before the count was set would otherwise keep the old one.
// With adaptive threads it leaves the count the tuner chose.
void useRequestedThreads();
// The adaptive maximum, or 0 when setNumThreads fixed the count.
int adaptiveThreads();
// One kernel thread for libtorch ops called from the calling thread (the JS
// thread, libuv's pool, a data loader's), leaving the others' counts as they are.
void limitKernelThreadsOfThisThread();
// How many kernel threads the calling thread's parallel regions use (1: it starts none).
int kernelThreadsOfThisThread();
// Ends the kernel threads the calling thread's parallel regions started (its OpenMP pool; the next region
// starts them again). libgomp spins at a fork-join only while the process holds no more such threads
// than cores: an idle thread's pool would make every other thread's regions sleep and wake instead.
void releaseKernelThreadsOfThisThread();
// Deterministic kernels only, process-wide (torch.use_deterministic_algorithms).
void useDeterministicAlgorithms(bool on);
// Seeds libtorch's global generators (CPU and CUDA): weight init, dropout.
void manualSeed(uint64_t seed);

}  // namespace firebrand

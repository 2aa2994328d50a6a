// What the CPU offers beyond the baseline x86-64 the library is compiled for:
// kernels with a version compiled for AVX2 and FMA (__attribute__((target("avx2,fma"))))
// call it where this says so, and a portable version elsewhere; some have an AVX-512
// version too. FIREBRAND_CPU_BASELINE=1 makes every such kernel take its portable version,
// as on a CPU without AVX2, and FIREBRAND_CPU_BASELINE=avx2 its AVX2 one, so that the tests
// run each version on any machine that has it.
#pragma once

namespace firebrand {

// What the CPU and FIREBRAND_CPU_BASELINE allow, looked up once by the inline accessors below.
bool detectFma();
bool detectAvx512();

// Whether the CPU has AVX2 and FMA (and FIREBRAND_CPU_BASELINE is not 1). Inline: row kernels ask
// once a row, and a call into another file there cost about 1% of a decoding step.
inline bool cpuHasFma() {
  static const bool has = detectFma();
  return has;
}
// Whether it has AVX-512F besides (and FIREBRAND_CPU_BASELINE is neither 1 nor avx2).
inline bool cpuHasAvx512() {
  static const bool has = detectAvx512();
  return has;
}

}  // namespace firebrand

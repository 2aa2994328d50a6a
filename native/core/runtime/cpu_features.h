// What the CPU offers beyond the baseline x86-64 the library is compiled for:
// kernels with a version compiled for AVX2 and FMA (__attribute__((target("avx2,fma"))))
// call it where this says so, and a portable version elsewhere. FIREBRAND_CPU_BASELINE=1
// makes every such kernel take its portable version, as on a CPU without AVX2, so that
// the tests run that version on any machine.
#pragma once

namespace firebrand {

// Whether the CPU has AVX2 and FMA (and FIREBRAND_CPU_BASELINE is not 1).
bool cpuHasFma();

}  // namespace firebrand

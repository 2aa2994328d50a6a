// What the CPU offers beyond the baseline x86-64 the library is compiled for:
// kernels with a version compiled for AVX2 and FMA (__attribute__((target("avx2,fma"))))
// call it where this says so, and a portable version elsewhere.
#pragma once

namespace firebrand {

// Whether the CPU has AVX2 and FMA.
bool cpuHasFma();

}  // namespace firebrand

// How libtorch's elementwise kernels round on this machine, asked of libtorch
// itself (the answer depends on its build, the CPU and ATEN_CPU_CAPABILITY):
// its AVX2/AVX512 kernels compute x + alpha * y with one fused multiply-add,
// rounding once; its default kernels round twice. The fused optimizer steps
// (fused_sgd.h, fused_adam.h) round as it does, to give the same bits.
#pragma once

namespace firebrand {

// add(x, y, alpha): x + alpha * y.
template <typename T>
bool libtorchAddRoundsOnce();

// addcmul(x, y, z, value): x + value * y * z, with (value * y) rounded first.
template <typename T>
bool libtorchAddcmulRoundsOnce();

}  // namespace firebrand

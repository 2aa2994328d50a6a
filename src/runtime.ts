// Process-wide facts and settings of the libtorch runtime.
import os from 'node:os';

import { native, RuntimeInfo } from './native';

export type { RuntimeInfo };

/** libtorch version, BLAS in use, threads and CUDA devices of this process. */
export function runtimeInfo(): RuntimeInfo {
  return native.runtimeInfo();
}

/** Seeds libtorch's global generators (weight initialisation, dropout). */
export function manualSeed(seed: number): void {
  native.manualSeed(seed);
}

/**
 * Threads for libtorch's CPU kernels, process-wide (OpenMP and OpenBLAS share
 * them, as torch.set_num_threads does in Python). 'auto': every CPU or one, whichever
 * steps faster while training, measured again from time to time (busy cores make
 * many threads wait on each other).
 */
export function setNumThreads(threads: number | 'auto'): void {
  if (threads === 'auto') native.setNumThreads(os.availableParallelism(), true);
  else native.setNumThreads(threads);
}

/** Deterministic kernels only, process-wide, like torch.use_deterministic_algorithms (ops without one then throw). */
export function useDeterministicAlgorithms(on: boolean): void {
  native.useDeterministicAlgorithms(on);
}

let blasChecked = false;

/** Warns once per process when libtorch runs on the reference BLAS (about 8x slower). */
export function warnIfSlowBlas(): void {
  if (blasChecked) return;
  blasChecked = true;
  const { blas } = native.runtimeInfo();
  if (blas.vendor === 'reference') {
    process.emitWarning(
      `libtorch is using the reference BLAS (${blas.library}); training steps run about 8x slower than with ` +
        'OpenBLAS. On Debian/Ubuntu: apt-get install libopenblas0-openmp, and check that ' +
        '`update-alternatives --display libblas.so.3-$(dpkg-architecture -qDEB_HOST_MULTIARCH)` selects it',
      { code: 'FIREBRAND_REFERENCE_BLAS' },
    );
  }
}

// What the CPU the tests run on offers, for tests whose kernels differ by it.
import fs from 'node:fs';

/** Whether the CPU has AVX-512F (where firebrand's AVX-512 kernels run, unless FIREBRAND_CPU_BASELINE says not). */
export function hasAvx512(): boolean {
  try {
    return /\bavx512f\b/.test(fs.readFileSync('/proc/cpuinfo', 'utf8'));
  } catch {
    return false;
  }
}

/** Whether the CPU has AVX2 and FMA (where firebrand's AVX2 kernels run, unless FIREBRAND_CPU_BASELINE=1). */
export function hasAvx2(): boolean {
  try {
    const flags = fs.readFileSync('/proc/cpuinfo', 'utf8');
    return /\bavx2\b/.test(flags) && /\bfma\b/.test(flags);
  } catch {
    return false;
  }
}

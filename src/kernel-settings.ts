// The environment variables that choose between firebrand's own kernel versions
// (docs/errors-and-runtime.md). The native code reads them; a value it would
// not recognise is named here, once, when the binary loads, instead of being
// taken silently as the default.
const KNOWN_VALUES: Record<string, string[]> = {
  FIREBRAND_CPU_BASELINE: ['0', '1', 'avx2'],
  FIREBRAND_DECODE_KERNELS: ['0', '1'],
};

/** Warns (FIREBRAND_UNKNOWN_SETTING) for each such variable set to a value it does not take. */
export function warnOfUnknownKernelSettings(env: NodeJS.ProcessEnv = process.env): void {
  for (const [name, values] of Object.entries(KNOWN_VALUES)) {
    const value = env[name];
    if (value === undefined || values.includes(value)) continue;
    process.emitWarning(
      `${name}=${JSON.stringify(value)} is not one of ${values.join(', ')}: ignored, the default kernels run`,
      { code: 'FIREBRAND_UNKNOWN_SETTING' },
    );
  }
}

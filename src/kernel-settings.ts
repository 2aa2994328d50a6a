// A value of an environment variable that chooses between firebrand's own kernel versions
// (docs/errors-and-runtime.md) that the variable does not take is named here, once, when the binary
// loads, instead of being taken silently as the default. The variables and their values are the native
// code's (native/core/runtime/kernel_settings.cpp).

/** One such variable and the values it takes. */
export interface KernelSetting {
  name: string;
  values: string[];
}

/** Warns (FIREBRAND_UNKNOWN_SETTING) for each such variable set to a value it does not take. */
export function warnOfUnknownKernelSettings(settings: KernelSetting[], env: NodeJS.ProcessEnv = process.env): void {
  for (const { name, values } of settings) {
    const value = env[name];
    if (value === undefined || values.includes(value)) continue;
    process.emitWarning(
      `${name}=${JSON.stringify(value)} is not one of ${values.join(', ')}: ignored, the default kernels run`,
      { code: 'FIREBRAND_UNKNOWN_SETTING' },
    );
  }
}

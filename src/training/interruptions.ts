// How a fit is interrupted from outside: its AbortSignal, and SIGINT/SIGTERM
// (config.handleSignals). Each stops training at the next step boundary and
// gives hooks still pending a grace period; a second signal exits at once.
import { firebrandError } from '../errors';
import type { HookRunner } from './hook-runner';

export interface InterruptionWatch {
  signal: AbortSignal | undefined;
  /** How long a pending hook may still hold fit after the interruption (fit's abortGraceMs). Default 5000. */
  graceMs: number | undefined;
  handleSignals: boolean;
  hooks: HookRunner;
  /** Asks training to stop, saying why. */
  stop: (reason: string) => void;
}

/** Watches for interruptions until the returned function is called. */
export function watchInterruptions({
  signal,
  graceMs = 5000,
  handleSignals,
  hooks,
  stop: stopTraining,
}: InterruptionWatch): () => void {
  if (!Number.isFinite(graceMs) || graceMs < 0) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `fit: options.abortGraceMs must be a number of milliseconds >= 0, got ${graceMs}`,
    );
  }
  const stop = (reason: string) => {
    stopTraining(reason);
    hooks.abandonHooksAfter(graceMs);
  };
  const onAbort = () => stop("fit's signal was aborted");
  if (signal?.aborted) onAbort();
  signal?.addEventListener('abort', onAbort);
  let received = 0;
  const onSignal = (name: NodeJS.Signals) => {
    if (++received > 1) process.exit(name === 'SIGINT' ? 130 : 143);
    process.stderr.write(`firebrand: ${name}: stopping after the current step (again to abort at once)\n`);
    stop(`${name} received`);
  };
  if (handleSignals) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  return () => {
    hooks.clearAbandonment();
    signal?.removeEventListener('abort', onAbort);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}

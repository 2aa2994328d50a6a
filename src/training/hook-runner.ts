// Calls a hook on the trainer itself (a subclass's methods) and then on every
// callback, in order, awaiting each; an error names the hook. Per-batch hooks
// are handed to C++ as one function the loop waits on, only when some target
// defines one.
import { AsyncLocalStorage } from 'node:async_hooks';

import { firebrandError } from '../errors';
import type { NativeBatchEvent, NativeBatchHook } from '../native';
import type { Callback, TrainerView } from './callbacks';
import { TRAIN_BATCH_HOOKS, VAL_BATCH_HOOKS } from './callbacks';

type HookName = keyof Callback;

/** An async hook being awaited; abandon() rejects the await (the hook itself runs on, unheard). */
interface PendingHook {
  name: string;
  abandon(error: Error): void;
  timer?: NodeJS.Timeout;
}
type HookArgs<Name extends HookName> = Parameters<NonNullable<Callback[Name]>>;

/** The hook (and whose) that a trainer method is called from, followed through the hook's awaits. */
const runningHook = new AsyncLocalStorage<{ name: HookName; trainer: TrainerView }>();

/** The hook of `trainer` whose code (or awaited continuation) is calling, or undefined outside its hooks. */
export function callingHook(trainer: TrainerView): HookName | undefined {
  const hook = runningHook.getStore();
  return hook?.trainer === trainer ? hook.name : undefined;
}

/** A callback's error, named by its hook; the original is the `cause`. */
export function callbackError(hook: string, error: unknown): Error {
  if (error instanceof Error && (error as { hook?: string }).hook !== undefined) return error;
  const message = error instanceof Error ? error.message : String(error);
  return Object.assign(new Error(`callback ${hook} threw: ${message}`, { cause: error }), {
    code: 'ERR_FIREBRAND_CALLBACK',
    hook,
  });
}

export class HookRunner {
  /** The first error of a per-batch hook, which ended the native call it ran in. */
  private batchFailure: Error | undefined;
  /** The running batch hook's done(), which the C++ loop waits for. */
  private pendingDone: ((ok: boolean) => void) | undefined;
  private readonly pendingHooks = new Set<PendingHook>();
  /** Set once the running fit was aborted: how long a hook may still keep it waiting. */
  private abortGraceMs: number | undefined;

  constructor(
    private readonly trainer: TrainerView,
    private readonly callbacks: readonly Callback[],
  ) {}

  private get targets(): Callback[] {
    return [this.trainer as Callback, ...this.callbacks];
  }

  /** Whether the trainer or any callback defines one of `names`. */
  defines(names: readonly HookName[]): boolean {
    return this.targets.some((target) => names.some((name) => typeof target[name] === 'function'));
  }

  /** Runs hook `name` on every target in order, awaiting each. */
  async run<Name extends HookName>(name: Name, ...args: HookArgs<Name>): Promise<void> {
    for (const call of this.calls(name, args)) await call();
  }

  /** Runs an observer hook (onProgress, onLog, onEvalProgress) synchronously. */
  observe<Name extends 'onProgress' | 'onLog' | 'onEvalProgress'>(name: Name, ...args: HookArgs<Name>): void {
    for (const call of this.calls(name, args)) call();
  }

  /** Each target's `name` hook bound to `args`; an error (thrown or rejected) names the hook. */
  private calls<Name extends HookName>(name: Name, args: HookArgs<Name>): (() => unknown)[] {
    return this.targets.flatMap((target) => {
      const hook = target[name] as ((...hookArgs: HookArgs<Name>) => unknown) | undefined;
      if (typeof hook !== 'function') return [];
      return [
        () => {
          const named = (error: unknown) => {
            throw callbackError(name, error);
          };
          try {
            const result = runningHook.run({ name, trainer: this.trainer }, () => hook.apply(target, args));
            return result instanceof Promise ? this.abandonable(name, result).catch(named) : result;
          } catch (error) {
            return named(error);
          }
        },
      ];
    });
  }

  /**
   * After an abort (fit's signal, SIGINT/SIGTERM): a hook still pending `graceMs` from now, or from
   * its own start, is abandoned and its await rejects with ERR_FIREBRAND_CALLBACK_ABANDONED, so that
   * a callback whose promise never settles cannot hold fit forever.
   */
  abandonHooksAfter(graceMs: number): void {
    if (this.abortGraceMs !== undefined) return;
    this.abortGraceMs = graceMs;
    for (const hook of this.pendingHooks) this.startGrace(hook);
  }

  /** The fit ended: hooks are awaited as long as they take again. */
  clearAbandonment(): void {
    this.abortGraceMs = undefined;
    for (const hook of this.pendingHooks) clearTimeout(hook.timer);
  }

  private startGrace(hook: PendingHook): void {
    const graceMs = this.abortGraceMs as number;
    hook.timer = setTimeout(() => {
      const error = firebrandError(
        'ERR_FIREBRAND_CALLBACK_ABANDONED',
        `callback ${hook.name} had not settled ${graceMs / 1000} s after fit was aborted; fit stopped waiting for it ` +
          '(its promise never settled, or took longer than fit(data, { abortGraceMs }))',
      );
      hook.abandon(Object.assign(error, { hook: hook.name }));
    }, graceMs);
  }

  /** `result`, unless the hook is abandoned first (abandonHooksAfter). */
  private abandonable(name: string, result: Promise<unknown>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const hook: PendingHook = {
        name,
        abandon: (error) => {
          this.pendingHooks.delete(hook);
          reject(error);
        },
      };
      const forget = () => {
        clearTimeout(hook.timer);
        this.pendingHooks.delete(hook);
      };
      this.pendingHooks.add(hook);
      if (this.abortGraceMs !== undefined) this.startGrace(hook);
      result.then(
        (value) => {
          forget();
          resolve(value);
        },
        (error: unknown) => {
          forget();
          reject(error);
        },
      );
    });
  }

  /** The per-batch hook for the C++ loop, or undefined when nobody listens (no round trips). */
  batchHook(kind: 'train' | 'val'): NativeBatchHook | undefined {
    if (!this.defines(kind === 'train' ? TRAIN_BATCH_HOOKS : VAL_BATCH_HOOKS)) return undefined;
    return (event, done) => {
      this.pendingDone = done;
      this.runBatchHooks(event).then(
        () => this.finishBatch(true),
        (error: Error) => {
          this.batchFailure ??= error;
          this.finishBatch(false);
        },
      );
    };
  }

  /**
   * Awaits a native call that ran batch hooks; if one failed, rejects with its error instead. The
   * training thread waits for each batch's done(): a process.exit() from a hook releases it, or
   * Node's exit would wait for that thread forever.
   */
  async settle<Result>(call: Promise<Result>): Promise<Result> {
    this.batchFailure = undefined;
    const releaseOnExit = () => this.finishBatch(false);
    process.once('exit', releaseOnExit);
    try {
      return await call;
    } catch (error) {
      throw this.batchFailure ?? error;
    } finally {
      process.off('exit', releaseOnExit);
      this.batchFailure = undefined;
    }
  }

  private finishBatch(ok: boolean): void {
    const done = this.pendingDone;
    this.pendingDone = undefined;
    done?.(ok);
  }

  private async runBatchHooks(event: NativeBatchEvent): Promise<void> {
    const info = { epoch: event.epoch, batch: event.batch, size: event.size, globalStep: event.globalStep };
    const tfLogs = { batch: event.batch, size: event.size };
    switch (event.hook) {
      case 'preTrainBatch':
        await this.run('preTrainBatch', info, this.trainer);
        await this.run('onBatchBegin', event.batch, tfLogs);
        break;
      case 'postTrainBatch':
        await this.run('postTrainBatch', { ...info, loss: event.loss ?? NaN }, this.trainer);
        await this.run('onBatchEnd', event.batch, { ...tfLogs, loss: event.loss ?? NaN });
        break;
      case 'preValBatch':
        await this.run('preValBatch', info, this.trainer);
        break;
      case 'postValBatch':
        await this.run('postValBatch', { ...info, loss: event.loss ?? NaN }, this.trainer);
        break;
    }
  }
}

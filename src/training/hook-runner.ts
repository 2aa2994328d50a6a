// Calls a hook on the trainer itself (a subclass's methods) and then on every
// callback, in order, awaiting each; an error names the hook. Per-batch hooks
// are handed to C++ as one function the loop waits on, only when some target
// defines one.
import type { NativeBatchEvent, NativeBatchHook } from '../native';
import type { Callback } from './callbacks';
import { TRAIN_BATCH_HOOKS, VAL_BATCH_HOOKS } from './callbacks';
import type { Trainer } from './trainer';

type HookName = keyof Callback;
type HookArgs<Name extends HookName> = Parameters<NonNullable<Callback[Name]>>;

/** A callback's error, named by its hook; the original is the `cause`. */
export function callbackError(hook: string, error: unknown): Error {
  if (error instanceof Error && (error as { hook?: string }).hook !== undefined) return error;
  const message = error instanceof Error ? error.message : String(error);
  return Object.assign(new Error(`callback ${hook} threw: ${message}`, { cause: error }), { code: 'ERR_FIREBRAND_CALLBACK', hook });
}

export class HookRunner {
  /** The first error of a per-batch hook, which ended the native call it ran in. */
  private batchFailure: Error | undefined;
  /** The running batch hook's done(), which the C++ loop waits for. */
  private pendingDone: ((ok: boolean) => void) | undefined;

  constructor(
    private readonly trainer: Trainer,
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
            const result = hook.apply(target, args);
            return result instanceof Promise ? result.catch(named) : result;
          } catch (error) {
            return named(error);
          }
        },
      ];
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

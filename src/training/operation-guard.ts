// The trainer's one-operation rule: while one operation runs (a fit, an
// evaluation), another from outside its hooks is refused; one from a hook runs
// at that boundary as far as its policy allows, or is refused at once saying
// why (never a wait on the operation that awaits the hook).
import { firebrandError } from '../errors';
import { TRAIN_BATCH_HOOKS, VAL_BATCH_HOOKS } from './callbacks';
import { callingHook } from './hook-runner';

/** The trainer an operation belongs to (hooks are told apart by it). */
type Owner = Parameters<typeof callingHook>[0];

/**
 * What an exclusive operation may do when called from a hook of the running one: 'noHook' never,
 * 'epochHooks' from hooks between batches (not per-batch hooks, which a batch waits for),
 * 'afterTraining' from postFit, onTrainEnd and onException, 'anyHook' from any (the engine checks the step boundary).
 */
export type HookPolicy = 'noHook' | 'epochHooks' | 'afterTraining' | 'anyHook';

const PER_BATCH_HOOKS: readonly string[] = [...TRAIN_BATCH_HOOKS, ...VAL_BATCH_HOOKS];
const AFTER_TRAINING_HOOKS: readonly string[] = ['postFit', 'onTrainEnd', 'onException'];

/** Why `operation` cannot run from `hook` of the running operation, or undefined when it can. */
function refusalInHook(operation: string, policy: HookPolicy, hook: string, running: string): string | undefined {
  const from = `${operation}: called from ${hook}, a hook of the running ${running}`;
  switch (policy) {
    case 'noHook':
      return `${from}; a trainer runs one ${operation} at a time: start it after ${running} resolves`;
    case 'epochHooks':
      return PER_BATCH_HOOKS.includes(hook)
        ? `${from}, which waits for that hook at every batch while ${operation} would run batches of its own; ` +
            'call it from an epoch hook (preEpoch, postEpoch, postValidation) or use config.evalEvery'
        : undefined;
    case 'afterTraining':
      return running === 'fit' && !AFTER_TRAINING_HOOKS.includes(hook)
        ? `${from}, after which the trainer could not train on; call it from postFit, or after fit resolves`
        : undefined;
    case 'anyHook':
      return undefined;
  }
}

export class OperationGuard {
  private running: string | undefined;

  constructor(private readonly trainer: Owner) {}

  /** Runs `body` as the trainer's one operation, or from a hook of the running one as `inHooks` allows. */
  async exclusive<Result>(operation: string, inHooks: HookPolicy, body: () => Promise<Result>): Promise<Result> {
    if (this.running) {
      const hook = callingHook(this.trainer);
      if (hook === undefined) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_STATE',
          `cannot start ${operation}: this trainer is already running ${this.running}; await it before starting another`,
        );
      }
      const refusal = refusalInHook(operation, inHooks, hook, this.running);
      if (refusal !== undefined) throw firebrandError('ERR_FIREBRAND_INVALID_STATE', refusal);
      return body();
    }
    this.running = operation;
    try {
      return await body();
    } finally {
      this.running = undefined;
    }
  }
}

// Every loss, optimizer and learning-rate schedule a user names: the fields
// each takes, with PyTorch's defaults (torch.nn / torch.optim /
// transformers' schedules). The one owner of their rules and defaults: C++
// builds them from the resolved values and checks nothing again.
import { firebrandError } from '../errors';
import {
  anyInteger,
  boolean,
  either,
  field,
  integer,
  ListOf,
  number,
  numberList,
  oneOf,
  REQUIRED,
  Rule,
  Schema,
  Variants,
} from '../options/schema';
import type { NativeEngineSpec, NativeNamedSpec } from '../native-specs';
import type { NamedOptimizer } from './objectives';

// 'balanced': scikit-learn's compute_class_weight, from fit's training targets (computed in C++ at fit).
const crossEntropyWeights = field(either(numberList(0), oneOf('balanced')), undefined, [[1, 0.5], 'balanced']);

export const losses = new Variants('loss', {
  cross_entropy: {
    ignoreIndex: field(anyInteger, -100, [-1]),
    weight: crossEntropyWeights,
    labelSmoothing: field(number(0, 1), 0, [0, 1]),
  },
  nll: { ignoreIndex: field(anyInteger, -100, [-1]), weight: crossEntropyWeights },
  mse: {},
  l1: {},
  smooth_l1: { beta: field(number(0), 1, [0]) },
  huber: { delta: field(number(0, Infinity, true), 1, [1e-12]) },
  bce_with_logits: { posWeight: field(numberList(0), undefined, [[2]]) },
  kl_div: {
    reduction: field(oneOf('mean', 'batchmean', 'sum'), 'mean', ['batchmean', 'sum']),
    logTarget: field(boolean, false, [true]),
  },
});

const prefixes: Rule = (value) =>
  Array.isArray(value) && value.length > 0 && value.every((prefix) => typeof prefix === 'string')
    ? undefined
    : 'a non-empty list of parameter name prefixes';

const grouping: Schema = {
  noDecayOnBiasAndNorm: field(boolean, false, [true]),
  paramGroups: new ListOf({ params: field(prefixes, REQUIRED), lr: field(number(0)), weightDecay: field(number(0)) }),
};

const nonNegative = (fallback: number) => field(number(0), fallback, [0]);

/** A learning rate given to a trainer method (setLearningRate, unfreeze): the rule of the optimizers' lr. */
export const learningRate = number(0);

const adamFamily = (weightDecay: number): Schema => ({
  lr: nonNegative(1e-3),
  betas: field(
    (value) =>
      Array.isArray(value) && value.length === 2 && value.every((beta) => number(0, 0.999999999)(beta) === undefined)
        ? undefined
        : 'a list of 2 numbers in [0, 0.999999999]',
    [0.9, 0.999],
    [[0, 0.999999999]],
  ),
  eps: nonNegative(1e-8),
  weightDecay: nonNegative(weightDecay),
  amsgrad: field(boolean, false, [true]),
  fused: field(boolean, true, [false]),
  ...grouping,
});

export const optimizers = new Variants(
  'optimizer',
  {
    sgd: {
      lr: nonNegative(1e-3),
      momentum: nonNegative(0),
      dampening: nonNegative(0),
      weightDecay: nonNegative(0),
      nesterov: field(boolean, false, [false]),
      fused: field(boolean, true, [false]),
      ...grouping,
    },
    adam: adamFamily(0),
    adamw: adamFamily(1e-2),
    rmsprop: {
      lr: nonNegative(1e-2),
      alpha: field(number(0, 1), 0.99, [0, 1]),
      eps: nonNegative(1e-8),
      weightDecay: nonNegative(0),
      momentum: nonNegative(0),
      centered: field(boolean, false, [true]),
      ...grouping,
    },
    adagrad: {
      lr: nonNegative(1e-2),
      lrDecay: nonNegative(0),
      weightDecay: nonNegative(0),
      initialAccumulatorValue: nonNegative(0),
      eps: nonNegative(1e-10),
      ...grouping,
    },
  },
  (spec) =>
    spec.name === 'sgd' && spec.nesterov === true && ((spec.momentum as number) <= 0 || spec.dampening !== 0)
      ? `nesterov needs momentum > 0 and dampening 0, got momentum ${spec.momentum} and dampening ${spec.dampening}`
      : undefined,
);

const warmupSteps = field(integer(0), 0, [0, 3]);
const gamma = (fallback: unknown) => field(number(0), fallback, [0, 0.5]);

const milestones: Rule = (value) =>
  Array.isArray(value) &&
  value.length > 0 &&
  value.every((step, i) => integer(1)(step) === undefined && (i === 0 || step > value[i - 1]))
    ? undefined
    : 'a non-empty list of increasing integers >= 1';

export const schedulers = new Variants('scheduler', {
  constant: { warmupSteps },
  linear: { warmupSteps },
  cosine: { warmupSteps, numCycles: field(number(0), 0.5, [0, 2]) },
  step: { stepSize: field(integer(1), REQUIRED, [1]), gamma: gamma(0.1) },
  multistep: { milestones: field(milestones, REQUIRED, [[1, 2]]), gamma: gamma(0.1) },
  exponential: { gamma: gamma(REQUIRED) },
  onecycle: {
    maxLr: field(number(0), REQUIRED, [0.1]),
    pctStart: field(number(0, 1), 0.3, [0, 1]),
    annealStrategy: field(oneOf('cos', 'linear'), 'cos', ['linear']),
    divFactor: field(number(0, Infinity, true), 25, [1e-12]),
    finalDivFactor: field(number(0, Infinity, true), 1e4, [1e-12]),
    cycleMomentum: field(boolean, true, [false]),
    baseMomentum: field(number(0, 1), 0.85, [0, 1]),
    maxMomentum: field(number(0, 1), 0.95, [0, 1]),
  },
  reduce_on_plateau: {
    monitor: field(oneOf('valLoss', 'valAccuracy', 'loss', 'accuracy'), 'valLoss', ['loss']),
    mode: field(oneOf('min', 'max'), 'min', ['max']),
    factor: field(number(0, 0.999999), 0.1, [0, 0.999999]),
    patience: field(integer(0), 10, [0]),
    threshold: nonNegative(1e-4),
    thresholdMode: field(oneOf('rel', 'abs'), 'rel', ['abs']),
    cooldown: field(integer(0), 0, [0]),
    minLr: nonNegative(0),
    eps: nonNegative(1e-8),
  },
});

/** The loss, optimizer(s) and schedule as C++ builds them: each checked (every problem at once) and defaulted. */
export function resolveObjectives(
  loss: unknown,
  {
    optimizer,
    optimizers: units,
    lrScheduler,
  }: { optimizer?: unknown; optimizers?: NamedOptimizer[]; lrScheduler?: unknown },
): Pick<NativeEngineSpec, 'loss' | 'optimizer' | 'optimizers' | 'lrScheduler'> {
  // Neither: a trainer made to predict, evaluate or generate only; fit refuses it (fitRefusal).
  if (optimizer !== undefined && units !== undefined) {
    throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'give either optimizer or optimizers, not both');
  }
  const named = (variants: Variants, value: unknown, origin: string) =>
    variants.resolve(value, origin) as NativeNamedSpec;
  const resolved = {
    loss: loss === undefined ? undefined : named(losses, loss, 'loss'),
    optimizer: optimizer === undefined ? undefined : named(optimizers, optimizer, 'optimizer'),
    optimizers: units?.map((unit, i) => ({
      ...unit,
      optimizer: named(optimizers, unit.optimizer, `optimizers[${i}].optimizer`),
    })),
    lrScheduler: named(schedulers, lrScheduler ?? 'constant', 'lrScheduler'),
  };
  const stepped = resolved.optimizer ? [resolved.optimizer] : (resolved.optimizers ?? []).map((unit) => unit.optimizer);
  if (
    resolved.lrScheduler.name === 'onecycle' &&
    resolved.lrScheduler.cycleMomentum &&
    stepped.some((spec) => spec.name === 'adagrad')
  ) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'lrScheduler (onecycle): cycleMomentum needs an optimizer with a momentum (sgd, adam, adamw, rmsprop); set cycleMomentum: false',
    );
  }
  return resolved;
}

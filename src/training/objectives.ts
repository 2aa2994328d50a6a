// Losses, optimizers and schedules chosen by PyTorch's names, with PyTorch's
// options in camelCase: their types. objective-schemas.ts owns their rules and
// defaults; C++ builds them (native/core/train, native/core/optim).

/**
 * Class weights: one number per class, or 'balanced' (scikit-learn's compute_class_weight: samples /
 * (classes × the class's count) over fit's training targets, computed when fit starts).
 */
export type ClassWeights = number[] | 'balanced';

export type LossSpec =
  | { name: 'cross_entropy'; labelSmoothing?: number; ignoreIndex?: number; weight?: ClassWeights }
  | { name: 'nll'; ignoreIndex?: number; weight?: ClassWeights }
  | { name: 'mse' }
  | { name: 'l1' }
  | { name: 'smooth_l1'; beta?: number }
  | { name: 'huber'; delta?: number }
  /** Targets are floats of the output's shape (multi-label); posWeight has one entry per output. */
  | { name: 'bce_with_logits'; posWeight?: number[] }
  /** Output holds log-probabilities; targets probabilities (or log-probabilities with logTarget). */
  | { name: 'kl_div'; reduction?: 'mean' | 'batchmean' | 'sum'; logTarget?: boolean };

/** A loss by name alone, with its default options. */
export type LossName = LossSpec['name'];

/** Parameters chosen by name prefix (PyTorch state-dict names: '0.weight', '2.'), with their own lr / weight decay. */
export interface ParamGroup {
  params: string[];
  lr?: number;
  weightDecay?: number;
}

/** Options a parameter group may override. */
export interface OptimizerGroupOptions {
  /** No weight decay on biases and normalization weights (every parameter of one dimension or less). */
  noDecayOnBiasAndNorm?: boolean;
  /** Groups by parameter-name prefix; parameters in none keep the optimizer's own options. */
  paramGroups?: ParamGroup[];
}

export type OptimizerSpec = OptimizerGroupOptions &
  (
    | {
        name: 'sgd';
        lr?: number;
        momentum?: number;
        dampening?: number;
        weightDecay?: number;
        nesterov?: boolean;
        /**
         * Update each CPU float32/float64 parameter in one pass over its elements instead of libtorch's
         * per-op step (the same bits, several times faster on small models). Default true; false takes
         * libtorch's own step. Other parameters always take libtorch's.
         */
        fused?: boolean;
      }
    | {
        name: 'adam' | 'adamw';
        lr?: number;
        betas?: [number, number];
        eps?: number;
        /** Default 0 for adam, 0.01 for adamw, as in PyTorch. */
        weightDecay?: number;
        amsgrad?: boolean;
        /**
         * Update each CPU float32/float64 parameter in one pass over its elements instead of libtorch's
         * per-op step, where a check against libtorch's step at start-up found the same bits
         * (runtimeInfo().fusedOptimizers). Default true; false takes libtorch's own step.
         */
        fused?: boolean;
      }
    | {
        name: 'rmsprop';
        lr?: number;
        alpha?: number;
        eps?: number;
        weightDecay?: number;
        momentum?: number;
        centered?: boolean;
      }
    | {
        name: 'adagrad';
        lr?: number;
        lrDecay?: number;
        weightDecay?: number;
        initialAccumulatorValue?: number;
        eps?: number;
      }
  );

export type OptimizerName = OptimizerSpec['name'];

/**
 * One of several optimizers (GAN-style): it owns the parameters under `params` (name prefixes)
 * and steps on the `loss` entry of the model's training_step.
 */
export interface NamedOptimizer {
  name: string;
  optimizer: OptimizerSpec | OptimizerName;
  params: string[];
  loss: string;
}

/**
 * Learning-rate schedules, stepped once per optimizer step. Warmup-and-decay schedules follow
 * transformers' get_*_schedule_with_warmup; the others torch.optim.lr_scheduler.
 */
export type SchedulerSpec =
  | { name: 'constant'; warmupSteps?: number }
  | { name: 'linear'; warmupSteps?: number }
  | { name: 'cosine'; warmupSteps?: number; numCycles?: number }
  | { name: 'step'; stepSize: number; gamma?: number }
  | { name: 'multistep'; milestones: number[]; gamma?: number }
  | { name: 'exponential'; gamma: number }
  | {
      name: 'onecycle';
      maxLr: number;
      pctStart?: number;
      annealStrategy?: 'cos' | 'linear';
      divFactor?: number;
      finalDivFactor?: number;
      cycleMomentum?: boolean;
      baseMomentum?: number;
      maxMomentum?: number;
    }
  | {
      name: 'reduce_on_plateau';
      /** The epoch-log field it watches after every epoch. Default 'valLoss'. */
      monitor?: 'valLoss' | 'valAccuracy' | 'loss' | 'accuracy';
      mode?: 'min' | 'max';
      factor?: number;
      patience?: number;
      threshold?: number;
      thresholdMode?: 'rel' | 'abs';
      cooldown?: number;
      minLr?: number;
      eps?: number;
    };

export type SchedulerName = SchedulerSpec['name'];

// Losses and optimizers chosen by PyTorch's names, with PyTorch's options in
// camelCase. Checked and built in C++ (native/core/train).

export type LossSpec =
  | { name: 'cross_entropy'; labelSmoothing?: number; ignoreIndex?: number }
  | { name: 'nll'; ignoreIndex?: number }
  | { name: 'mse' }
  | { name: 'l1' }
  | { name: 'smooth_l1'; beta?: number };

export type LossName = LossSpec['name'];

export type OptimizerSpec =
  | { name: 'sgd'; lr?: number; momentum?: number; dampening?: number; weightDecay?: number; nesterov?: boolean }
  | {
      name: 'adam' | 'adamw';
      lr?: number;
      betas?: [number, number];
      eps?: number;
      /** Default 0 for adam, 0.01 for adamw, as in PyTorch. */
      weightDecay?: number;
      amsgrad?: boolean;
    };

export type OptimizerName = OptimizerSpec['name'];

export function namedSpec<Spec extends { name: string }>(spec: Spec | Spec['name']): Spec {
  return (typeof spec === 'string' ? { name: spec } : spec) as Spec;
}

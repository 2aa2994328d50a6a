// nn.init: torch.nn.init's schemes with its names (camelCase) and defaults.
// A call is recorded on the parameter and replayed in C++ when the model is
// built, in the order the calls ran, so a seed draws what PyTorch draws.
import { firebrandError } from '../../errors';
import { field, number, oneOf, REQUIRED, resolve, type Schema, validate } from '../../options/schema';
import { nextConstruction, Parameter } from './module';

const nonlinearities = [
  'linear',
  'conv1d',
  'conv2d',
  'conv3d',
  'conv_transpose1d',
  'conv_transpose2d',
  'conv_transpose3d',
  'sigmoid',
  'tanh',
  'relu',
  'leaky_relu',
  'selu',
] as const;
export type Nonlinearity = (typeof nonlinearities)[number];
export type FanMode = 'fan_in' | 'fan_out';

const kaiming: Schema = {
  a: field(number(-Infinity), 0, [0]),
  mode: field(oneOf('fan_in', 'fan_out'), 'fan_in', ['fan_out']),
  nonlinearity: field(oneOf(...nonlinearities), 'leaky_relu', ['relu']),
};
const schemes: Record<string, Schema> = {
  uniform: { a: field(number(-Infinity), 0, [0]), b: field(number(-Infinity), 1, [1]) },
  normal: { mean: field(number(-Infinity), 0, [0]), std: field(number(0), 1, [1]) },
  truncNormal: {
    mean: field(number(-Infinity), 0, [0]),
    std: field(number(0), 1, [1]),
    a: field(number(-Infinity), -2, [-2]),
    b: field(number(-Infinity), 2, [2]),
  },
  constant: { val: field(number(-Infinity), REQUIRED, [0]) },
  xavierUniform: { gain: field(number(-Infinity), 1, [1]) },
  xavierNormal: { gain: field(number(-Infinity), 1, [1]) },
  kaimingUniform: kaiming,
  kaimingNormal: kaiming,
  orthogonal: { gain: field(number(-Infinity), 1, [1]) },
};

function record(scheme: string, tensor: Parameter, options: object): Parameter {
  const where = `nn.init.${scheme}_`;
  if (!(tensor instanceof Parameter)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${where}: expected a parameter (this.weight, layer.weight), got ${typeof tensor}`,
    );
  }
  validate(options, schemes[scheme], where);
  const resolved = resolve(options as Record<string, unknown>, schemes[scheme]) as Record<string, number | string>;
  if (scheme === 'truncNormal' && (resolved.a as number) >= (resolved.b as number)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${where}: a (${resolved.a}) must be below b (${resolved.b})`,
    );
  }
  tensor.inits.push({ scheme, options: resolved, construction: nextConstruction() });
  return tensor;
}

export const init = {
  uniform_: (tensor: Parameter, options: { a?: number; b?: number } = {}) => record('uniform', tensor, options),
  normal_: (tensor: Parameter, options: { mean?: number; std?: number } = {}) => record('normal', tensor, options),
  /** Normal values redrawn into [a, b] (absolute bounds, as PyTorch's trunc_normal_). */
  truncNormal_: (tensor: Parameter, options: { mean?: number; std?: number; a?: number; b?: number } = {}) =>
    record('truncNormal', tensor, options),
  constant_: (tensor: Parameter, val: number) => record('constant', tensor, { val }),
  ones_: (tensor: Parameter) => record('constant', tensor, { val: 1 }),
  zeros_: (tensor: Parameter) => record('constant', tensor, { val: 0 }),
  xavierUniform_: (tensor: Parameter, options: { gain?: number } = {}) => record('xavierUniform', tensor, options),
  xavierNormal_: (tensor: Parameter, options: { gain?: number } = {}) => record('xavierNormal', tensor, options),
  kaimingUniform_: (tensor: Parameter, options: { a?: number; mode?: FanMode; nonlinearity?: Nonlinearity } = {}) =>
    record('kaimingUniform', tensor, options),
  kaimingNormal_: (tensor: Parameter, options: { a?: number; mode?: FanMode; nonlinearity?: Nonlinearity } = {}) =>
    record('kaimingNormal', tensor, options),
  orthogonal_: (tensor: Parameter, options: { gain?: number } = {}) => record('orthogonal', tensor, options),
};

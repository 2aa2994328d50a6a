// Modules as PyTorch has them: fields that hold submodules, parameters and
// buffers, named by the field (so state-dict keys are PyTorch's), and a
// forward written in TypeScript over traced tensors.
import { firebrandError } from '../../errors';
import type { LayerSpec } from '../layer-specs';
import { op, Tensor, type DtypeName } from './tensor';
import { activeTrace, type DecodeKernelSpec } from './trace';

// Everything that draws random numbers at construction (a layer's default
// init, an nn.init call) gets the next number, so C++ replays them in the
// order a Python program would run them and a seed gives PyTorch's weights.
let constructions = 0;
export const nextConstruction = (): number => ++constructions;

const constructed = new WeakMap<object, number>();
/** @internal When `value` was made, in the order of nextConstruction. */
export const constructionOf = (value: object): number => constructed.get(value) ?? 0;
/** @internal Gives `value` (made without its constructor: a copy) the next construction number. */
export const markConstructed = (value: object): void => void constructed.set(value, nextConstruction());

/** The dtypes a module's floating parameters and buffers can be cast to (module.to). */
export type ModuleDtype = 'float32' | 'float64' | 'float16' | 'bfloat16';
/** @internal The same, as a list: module.to and fromPretrained's dtype name them in this order. */
export const MODULE_DTYPES: readonly ModuleDtype[] = ['float32', 'bfloat16', 'float16', 'float64'];
const casts = new WeakMap<Module, { dtype: ModuleDtype; construction: number }[]>();
/** @internal The casts of `module` (module.to), in the order they ran. */
export const castsOf = (module: Module): { dtype: ModuleDtype; construction: number }[] => casts.get(module) ?? [];

export type FloatDtype = 'float32' | 'float64';

export interface ParameterOptions {
  /** Default true; false keeps it out of the optimizer (it still saves in the state dict). */
  requiresGrad?: boolean;
  dtype?: FloatDtype;
}

/**
 * A trained tensor of a module (torch.nn.Parameter). It starts at zero: initialise it in the
 * constructor with nn.init (nn.init.kaimingUniform_(this.weight, { a: Math.sqrt(5) })).
 */
export class Parameter extends Tensor {
  readonly requiresGrad: boolean;
  readonly dtype: FloatDtype;
  /** @internal For a built-in layer's own tensor: the layer and its PyTorch name. */
  readonly ofLayer?: { layer: BuiltinLayer; name: string };
  /** @internal The nn.init calls on it, in order. */
  declare readonly inits: InitCall[];

  constructor(
    readonly shape: readonly number[] = [],
    options: ParameterOptions = {},
    /** @internal */ ofLayer?: { layer: BuiltinLayer; name: string },
  ) {
    super();
    this.requiresGrad = options.requiresGrad ?? true;
    this.dtype = options.dtype ?? 'float32';
    this.ofLayer = ofLayer;
    Object.defineProperty(this, 'inits', { value: [], enumerable: false });
    constructed.set(this, nextConstruction());
  }
}

/** An nn.init call as C++ replays it: the scheme, its options, and when it ran. */
export interface InitCall {
  scheme: string;
  options: Record<string, number | string>;
  construction: number;
}

export interface BufferOptions {
  dtype?: DtypeName;
  /** Every element's value (default 0). */
  fill?: number;
  /** Values in row-major order (instead of fill). */
  data?: readonly number[];
  /**
   * false: kept out of the state dict (saved weights, checkpoints, what initWeightsFrom expects), as
   * register_buffer(..., persistent=False); the model makes it anew from fill or data. Default true.
   */
  persistent?: boolean;
}

/** Module state that is saved but not trained (register_buffer): running statistics, masks, tables. */
export class Buffer extends Tensor {
  readonly dtype: DtypeName;
  readonly fill: number;
  readonly data?: readonly number[];
  readonly persistent: boolean;

  constructor(
    readonly shape: readonly number[],
    options: BufferOptions = {},
  ) {
    super();
    this.dtype = options.dtype ?? 'float32';
    this.fill = options.fill ?? 0;
    this.data = options.data;
    this.persistent = options.persistent ?? true;
    constructed.set(this, nextConstruction());
  }
}

/**
 * What a forward returns: one tensor, or several as an array or an object of tensors (PyTorch's tuple
 * and dict). A model with several outputs trains on one (config.lossOutput); predict returns them all.
 */
export type ForwardOutput = Tensor | Tensor[] | { [name: string]: Tensor };

/**
 * The base of every module. Subclasses assign submodules, parameters and buffers to fields (in the
 * order PyTorch's __init__ assigns them) and write forward over traced tensors; calling a
 * submodule is `this.conv1.forward(x)`.
 */
export abstract class Module {
  constructor() {
    constructed.set(this, nextConstruction());
  }

  /**
   * Each module declares what its forward takes and returns (tensors, tuples of them, options), as in
   * PyTorch; the model's own forward takes its inputFields() and returns a ForwardOutput.
   */
  abstract forward(...inputs: unknown[]): unknown;

  /** The dataset fields forward takes, in order (default: the one field 'input'). */
  inputFields(): string[] {
    return ['input'];
  }

  /**
   * A native kernel that may run this module's whole forward when generation decodes one position per
   * sequence (none by default). The architectures that have one (LlamaDecoderLayer) compute the same
   * with their ops; tests hold the two equal.
   * @internal
   */
  decodeKernel(): DecodeKernelSpec | undefined {
    return undefined;
  }

  /** Direct submodules by field name, in field order (named_children). */
  namedChildren(): [string, Module][] {
    return Object.entries(this).filter((entry): entry is [string, Module] => entry[1] instanceof Module);
  }

  /** This module and every submodule, with their paths ('' for this one), depth first (named_modules). */
  namedModules(prefix = ''): [string, Module][] {
    const all: [string, Module][] = [[prefix, this]];
    for (const [name, child] of this.namedChildren())
      all.push(...child.namedModules(prefix ? `${prefix}.${name}` : name));
    return all;
  }

  modules(): Module[] {
    return this.namedModules().map(([, module]) => module);
  }

  /**
   * Casts this module's floating parameters and buffers, its submodules' included, to `dtype`, after
   * everything constructed before the call (PyTorch's module.to(dtype)). Cast as a whole, the model
   * also casts its floating inputs (a JavaScript array is float32). Returns the module.
   */
  to(dtype: ModuleDtype): this {
    if (!MODULE_DTYPES.includes(dtype)) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `${this.className}.to: dtype must be one of ${MODULE_DTYPES.join(', ')}, got ${JSON.stringify(dtype)}`,
      );
    }
    casts.set(this, [...castsOf(this), { dtype, construction: nextConstruction() }]);
    return this;
  }

  /** The class name PyTorch would show (BasicBlock, Sequential, Conv2d). */
  get className(): string {
    return this.constructor.name;
  }
}

// PyTorch's class names where capitalising the layer type does not give them.
const classNames: Record<string, string> = {
  relu: 'ReLU',
  gelu: 'GELU',
  silu: 'SiLU',
  elu: 'ELU',
  leakyRelu: 'LeakyReLU',
  prelu: 'PReLU',
  rmsNorm: 'RMSNorm',
  lstm: 'LSTM',
  gru: 'GRU',
  rnn: 'RNN',
};
/** @internal PyTorch's class name of a layer type (relu: ReLU, maxPool2d: MaxPool2d). */
export const className = (type: string): string => classNames[type] ?? type[0].toUpperCase() + type.slice(1);

/**
 * A module built in C++ as its torch::nn module (nn.linear, nn.lstm, ...), with PyTorch's
 * parameters, buffers and initialisation. Its tensors are reachable for nn.init as
 * layer.weight / layer.bias (or layer.tensor('running_mean')). Assigning another module's
 * tensor ties it, as in PyTorch: `this.head.weight = this.embed.weight`.
 */
export abstract class BuiltinLayer<Spec extends { type: string } = { type: string }> extends Module {
  /** The layer's type and options, as nn.sequential takes them. */
  declare readonly spec: Spec;
  /** @internal The layer's tensors handed out for nn.init, by name. */
  declare readonly tensors: Map<string, Parameter>;
  /** @internal Tensors held elsewhere that the layer uses as its own (weight tying), by name. */
  declare readonly ties: Map<string, Parameter>;

  constructor(spec: Spec) {
    super();
    Object.defineProperty(this, 'spec', { value: spec, enumerable: false });
    Object.defineProperty(this, 'tensors', { value: new Map(), enumerable: false });
    Object.defineProperty(this, 'ties', { value: new Map(), enumerable: false });
  }

  get type(): Spec['type'] {
    return this.spec.type;
  }

  override get className(): string {
    return className(this.spec.type);
  }

  /** One of the layer's tensors by its PyTorch name, for nn.init (the tied one, once tied). */
  tensor(name: string): Parameter {
    const tied = this.ties.get(name);
    if (tied) return tied;
    let handle = this.tensors.get(name);
    if (!handle) {
      handle = new Parameter([], {}, { layer: this, name });
      this.tensors.set(name, handle);
    }
    return handle;
  }

  get weight(): Parameter {
    return this.tensor('weight');
  }

  set weight(tensor: Parameter) {
    this.tie('weight', tensor);
  }

  get bias(): Parameter {
    return this.tensor('bias');
  }

  set bias(tensor: Parameter) {
    this.tie('bias', tensor);
  }

  private tie(name: string, tensor: Parameter): void {
    if (!(tensor instanceof Parameter)) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `${this.className}.${name} = ...: expected a parameter to tie (another layer's ${name}, or an nn.Parameter), got ${tensor === null ? 'null' : typeof tensor}`,
      );
    }
    this.ties.set(name, tensor);
  }
}

/** A built-in layer that takes one tensor and returns one (nn.linear, nn.conv2d, ...); nn.sequential chains them. */
export class Layer<Spec extends LayerSpec = LayerSpec> extends BuiltinLayer<Spec> {
  forward(input: Tensor): Tensor {
    return op('layer', activeTrace(this.type).pathOf(this, this.className), input);
  }
}

/** Modules in a list, named 0, 1, ... (torch.nn.ModuleList). */
export class ModuleList<M extends Module = Module> extends Module {
  [index: number]: M;
  declare readonly length: number;

  constructor(modules: Iterable<M> = []) {
    super();
    let count = 0;
    for (const module of modules) this[count++] = module;
    Object.defineProperty(this, 'length', { value: count, enumerable: false });
  }

  *[Symbol.iterator](): Iterator<M> {
    for (let index = 0; index < this.length; index += 1) yield this[index];
  }

  forward(..._inputs: Tensor[]): Tensor {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'ModuleList has no forward: call its modules (for (const block of this.blocks) x = block.forward(x))',
    );
  }
}

/** Modules by name (torch.nn.ModuleDict). */
export class ModuleDict<M extends Module = Module> extends Module {
  [name: string]: unknown;

  constructor(modules: Record<string, M> = {}) {
    super();
    Object.assign(this, modules);
  }

  forward(..._inputs: Tensor[]): Tensor {
    throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'ModuleDict has no forward: call its modules by name');
  }
}

/** Modules applied in order, named 0, 1, ... (torch.nn.Sequential). As a Trainer's model it is nn.sequential's model. */
export class Sequential extends ModuleList {
  declare readonly type: 'sequential';

  constructor(modules: Iterable<Module>) {
    super(modules);
    Object.defineProperty(this, 'type', { value: 'sequential', enumerable: false });
  }

  /** The layers' specs, when every module is a built-in layer (nn.sequential's model as JSON). */
  get layers(): LayerSpec[] {
    return [...this].map((module) => {
      const spec = (module as { spec?: LayerSpec }).spec;
      if (!spec) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_ARGUMENT',
          `nn.sequential: ${module.className} is a module, not a layer; its spec is its trace`,
        );
      }
      return spec;
    });
  }

  override forward(input: Tensor): Tensor {
    return [...this].reduce((x, module, index) => {
      const output = module.forward(x);
      if (!(output instanceof Tensor)) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_ARGUMENT',
          `nn.sequential: module ${index} (${module.className}) returned several outputs; a Sequential hands one tensor from module to module`,
        );
      }
      return output;
    }, input);
  }
}

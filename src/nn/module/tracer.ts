// A TypeScript module as C++ builds and runs it: the module tree (names,
// parameter and buffer shapes, built-in layers' specs), the order in which
// layers and nn.init calls drew their random numbers, and the traced graph.
import { firebrandError } from '../../errors';
import { layers } from '../layer-schemas';
import { copyOf, isCopiedLayer } from './clone';
import { Buffer, BuiltinLayer, castsOf, constructionOf, Module, Parameter } from './module';
import { Tensor } from './tensor';
import { type GraphSpec, recording, Trace } from './trace';

export interface ModuleNode {
  className: string;
  /** A built-in layer's resolved spec (its tensors are the torch::nn module's). */
  layer?: Record<string, unknown>;
  parameters: { name: string; shape: number[]; dtype: string; requiresGrad: boolean }[];
  buffers: { name: string; shape: number[]; dtype: string; fill: number; data?: number[]; persistent?: false }[];
  /** Fields holding a tensor of another module (weight tying), by the state-dict name of that tensor. */
  ties?: { name: string; source: string; buffer?: true }[];
  /** With ties: the tensor fields' names in declaration order, which is PyTorch's state-dict order. */
  order?: string[];
  children: { name: string; module: ModuleNode }[];
}

/**
 * A layer built (drawing its default initialisation, unless it belongs to a copy), an nn.init call, or
 * a module's values copied into its copy, in the order they ran.
 */
export type ConstructionStep =
  | { layer: string; copied?: true }
  | { init: string; scheme: string; options: Record<string, number | string> }
  | { copy: string; from: string }
  | { cast: string; dtype: string };

/** A model written as TypeScript modules, traced: what C++ builds. */
export interface GraphModelSpec {
  type: 'graph';
  modules: ModuleNode;
  construction: ConstructionStep[];
  graph: GraphSpec;
  /** State names a checkpoint fills right after the build (fromPretrained): their values are not drawn. */
  valuesLoadedLater?: string[];
}

/** The dtype a model's weights were cast to as a whole (model.to), float32 when never. */
export function modelDtype(spec: unknown): string {
  const construction = (spec as Partial<GraphModelSpec>).construction ?? [];
  const casts = construction.filter(
    (step): step is { cast: string; dtype: string } => 'cast' in step && step.cast === '',
  );
  return casts.at(-1)?.dtype ?? 'float32';
}

const join = (prefix: string, name: string): string => (prefix ? `${prefix}.${name}` : name);

type StateTensor = Parameter | Buffer;

class TreeWalk {
  readonly modulePaths = new Map<object, string>();
  /** Each tensor's first name (PyTorch's named_parameters keeps it), for the trace. */
  readonly statePaths = new Map<object, string>();
  /** Where each tensor is made: its layer's, or the first module field holding it. */
  private readonly homes = new Map<StateTensor, string>();
  /** Fields and layer tensors that hold a tensor made elsewhere. */
  private readonly ties: { node: ModuleNode; name: string; tensor: StateTensor; path: string }[] = [];
  private readonly steps: {
    construction: number;
    step:
      | ConstructionStep
      | { tensor: StateTensor; scheme: string; options: Record<string, number | string> }
      | { copyPath: string; original: Module };
  }[] = [];

  /** Layers built, nn.init calls (on the tensor where it is made) and copies, in the order they ran. */
  construction(): ConstructionStep[] {
    return this.steps
      .sort((a, b) => a.construction - b.construction)
      .map(({ step }) => {
        if ('tensor' in step) return { init: this.homes.get(step.tensor)!, scheme: step.scheme, options: step.options };
        if (!('copyPath' in step)) return step;
        const from = this.modulePaths.get(step.original);
        if (from === undefined) {
          throw firebrandError(
            'ERR_FIREBRAND_INVALID_ARGUMENT',
            `${step.copyPath}: a copy of a module that is not part of the model`,
          );
        }
        return { copy: step.copyPath, from };
      });
  }

  /** The ties of every module node, once the whole tree has been walked (a tensor's home may come later). */
  resolveTies(): void {
    for (const { node, name, tensor, path } of this.ties) {
      const source = this.homes.get(tensor);
      if (source === undefined) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_ARGUMENT',
          `${path}: holds a tensor that is not part of the model (its layer or module is no field of the model's modules)`,
        );
      }
      if (source !== path)
        (node.ties ??= []).push({ name, source, ...(tensor instanceof Buffer ? { buffer: true as const } : {}) });
    }
  }

  module(module: Module, modulePath: string): ModuleNode {
    const where = modulePath || 'model';
    const earlier = this.modulePaths.get(module);
    if (earlier !== undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `${where}: this module is also the field '${earlier || 'model'}'; register a module once and call it from forward as often as needed`,
      );
    }
    this.modulePaths.set(module, modulePath);
    const copy = copyOf(module);
    if (copy)
      this.steps.push({ construction: copy.construction, step: { copyPath: modulePath, original: copy.original } });
    for (const { dtype, construction } of castsOf(module))
      this.steps.push({ construction, step: { cast: modulePath, dtype } });
    if (module instanceof BuiltinLayer) return this.layer(module, modulePath);
    const node: ModuleNode = { className: module.className, parameters: [], buffers: [], children: [] };
    const order: string[] = [];
    for (const [name, value] of Object.entries(module)) this.field(node, order, name, value, modulePath);
    // Ties are registered after the module's own tensors unless the order says otherwise.
    if (order.length > node.parameters.length + node.buffers.length) node.order = order;
    return node;
  }

  /** One field of a module: a tensor it owns or ties, a submodule, or neither (skipped). */
  private field(node: ModuleNode, order: string[], name: string, value: unknown, modulePath: string): void {
    const where = modulePath || 'model';
    if (
      !(value instanceof Module || value instanceof Tensor) &&
      !(Array.isArray(value) && value.some((item) => item instanceof Module || item instanceof Tensor))
    )
      return;
    if (name.includes('.'))
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `${where}: '${name}' cannot name a submodule or tensor (no '.')`,
      );
    const fieldPath = join(modulePath, name);
    if (
      (value instanceof Parameter || value instanceof Buffer) &&
      (this.homes.has(value) || (value instanceof Parameter && value.ofLayer))
    ) {
      this.seen(value, fieldPath);
      this.ties.push({ node, name, tensor: value, path: fieldPath });
      order.push(name);
    } else if (value instanceof Parameter) {
      this.made(value, fieldPath);
      order.push(name);
      node.parameters.push({ name, shape: [...value.shape], dtype: value.dtype, requiresGrad: value.requiresGrad });
    } else if (value instanceof Buffer) {
      this.made(value, fieldPath);
      order.push(name);
      node.buffers.push({
        name,
        shape: [...value.shape],
        dtype: value.dtype,
        fill: value.fill,
        ...(value.data ? { data: [...value.data] } : {}),
        ...(value.persistent ? {} : { persistent: false as const }),
      });
    } else if (value instanceof Module) {
      node.children.push({ name, module: this.module(value, fieldPath) });
    } else {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `${fieldPath}: a plain array of modules or tensors is not registered (as in PyTorch); use nn.moduleList([...]), or a Parameter/Buffer field`,
      );
    }
  }

  private layer(layer: BuiltinLayer, modulePath: string): ModuleNode {
    const resolved = layers.resolve(layer.spec, modulePath || 'model');
    this.steps.push({
      construction: constructionOf(layer),
      step: { layer: modulePath, ...(isCopiedLayer(layer) ? { copied: true as const } : {}) },
    });
    const node: ModuleNode = { className: layer.className, layer: resolved, parameters: [], buffers: [], children: [] };
    for (const [name, handle] of layer.tensors) this.made(handle, join(modulePath, name));
    for (const [name, tensor] of layer.ties) {
      this.seen(tensor, join(modulePath, name));
      this.ties.push({ node, name, tensor, path: join(modulePath, name) });
    }
    return node;
  }

  /** A tensor made here: a layer's own, or a module field's (its nn.init calls run on it). */
  private made(tensor: StateTensor, statePath: string): void {
    this.homes.set(tensor, statePath);
    this.seen(tensor, statePath);
    if (tensor instanceof Parameter) {
      for (const { scheme, options, construction } of tensor.inits)
        this.steps.push({ construction, step: { tensor, scheme, options } });
    }
  }

  private seen(tensor: StateTensor, statePath: string): void {
    if (!this.statePaths.has(tensor)) this.statePaths.set(tensor, statePath);
  }
}

/** The graph outputs of what the root's forward returned: a tensor, an array or an object of tensors. */
function returned(
  output: unknown,
  className: string,
  trace: Trace,
): Pick<GraphSpec, 'returns' | 'outputs' | 'outputNames'> {
  if (output instanceof Tensor) return { returns: 'tensor', outputs: [output.valueIn(trace)], outputNames: ['output'] };
  const expected = 'a tensor, an array of tensors or an object of tensors';
  const plainObject =
    typeof output === 'object' && output !== null && [Object.prototype, null].includes(Object.getPrototypeOf(output));
  if (!Array.isArray(output) && !plainObject) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${className}.forward must return ${expected}; it returned ${describeValue(output)}`,
    );
  }
  const entries = Object.entries(output as object);
  if (entries.length === 0)
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${className}.forward returned an empty ${Array.isArray(output) ? 'array' : 'object'}; it must return ${expected}`,
    );
  for (const [name, value] of entries) {
    if (!(value instanceof Tensor)) {
      const at = Array.isArray(output) ? `[${name}]` : `.${name}`;
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `${className}.forward returned ${describeValue(value)} at ${at}; it must return ${expected}`,
      );
    }
  }
  return {
    returns: Array.isArray(output) ? 'array' : 'object',
    outputs: entries.map(([, value]) => (value as Tensor).valueIn(trace)),
    outputNames: entries.map(([name]) => name),
  };
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'object') return `a ${value.constructor?.name ?? 'object'}`;
  return `a ${typeof value}`;
}

/** Walks `root`'s modules and traces its forward once. */
export function traceModule(root: Module): GraphModelSpec {
  const walk = new TreeWalk();
  const modules = walk.module(root, '');
  walk.resolveTies();
  const trace = new Trace(walk.statePaths, walk.modulePaths);
  // Each module's forward runs with its path as the scope, so ops and errors name it.
  const wrapped: Module[] = [];
  for (const [module, modulePath] of walk.modulePaths as Map<Module, string>) {
    const forward = module.forward;
    Object.defineProperty(module, 'forward', {
      value: (...inputs: Tensor[]) => {
        const decode = module.decodeKernel();
        const kernel = decode && {
          decode,
          inputs: inputs.map((input) => (input instanceof Tensor ? input.valueIn(trace) : -1)),
        };
        return trace.within(
          modulePath,
          module.className,
          () => forward.apply(module, inputs),
          (output) => (output instanceof Tensor ? output.valueIn(trace) : -1),
          kernel,
        );
      },
      configurable: true,
      enumerable: false,
      writable: true,
    });
    wrapped.push(module);
  }
  try {
    const graph = recording(trace, (): GraphSpec => {
      const inputs = root.inputFields();
      const output = root.forward(...inputs.map((name) => new Tensor({ trace, id: trace.record('input', [name]) })));
      const outputs = returned(output, root.className, trace);
      trace.checkEveryResultUsed(outputs.outputs);
      return { inputs, nodes: trace.nodes, calls: trace.calls, ...outputs };
    });
    return { type: 'graph', modules, construction: walk.construction(), graph };
  } finally {
    for (const module of wrapped) delete (module as { forward?: unknown }).forward;
  }
}

// One trace of a module's forward: the graph of ops C++ runs at every step.
// Each node is an op over earlier nodes' values (by index), constants, and
// the module path and source line it came from, for errors.
import path from 'node:path';

import { firebrandError } from '../../errors';

/** An operand in the graph: a constant, or { v: index } for the value of an earlier node. */
export type GraphArg = number | boolean | string | null | { v: number } | GraphArg[];

export interface GraphNode {
  op: string;
  args: GraphArg[];
  /** The module path the op ran in ('' for the root). */
  scope: string;
  /** The line of the forward that recorded it (file:line:column). */
  at?: string;
}

/** A module's forward call, in the order calls began: what summary() lists. */
export interface ModuleCall {
  module: string;
  className: string;
  /** Calls it was nested in (0 for the model's own forward). */
  depth: number;
  /** The node of what it returned (-1 for anything but one tensor). */
  output: number;
  /** A module with a decode kernel: the node of each argument (-1 for one that is not a tensor). */
  inputs?: number[];
  /** The native kernel that may run this call for one new position when decoding (Module.decodeKernel). */
  decode?: DecodeKernelSpec;
}

/**
 * A native kernel that runs a whole module call when generation decodes one new position per
 * sequence with no gradient (native/core/nn/llama_decode_layer): the module's ops must compute the
 * same. 'llamaDecoderLayer': forward(x, cos, sin, attnMask?) as LlamaDecoderLayer writes it.
 */
export interface DecodeKernelSpec {
  kind: 'llamaDecoderLayer';
  heads: number;
  kvHeads: number;
  headDim: number;
  eps: number;
  /** The sliding window (null: every earlier position). */
  window: number | null;
}

export interface GraphSpec {
  /** Dataset fields, one per forward argument, in order. */
  inputs: string[];
  nodes: GraphNode[];
  calls: ModuleCall[];
  /** What forward returned: one tensor, an array or an object of tensors. */
  returns: 'tensor' | 'array' | 'object';
  /** Node indices of what forward returned, in order. */
  outputs: number[];
  /** Each output's name: the object's key, the array's index ('0', '1', ...), or 'output' for one tensor. */
  outputNames: string[];
}

// firebrand's own code, compiled (dist/src) and as source maps name it (src): never the user's line,
// even when no frame of theirs is on the stack (a layer stack traced by the trainer).
const SOURCE_FOLDER = `${path.resolve(__dirname, '..', '..')}${path.sep}`;
const INTERNAL = [
  SOURCE_FOLDER,
  SOURCE_FOLDER.replace(`${path.sep}dist${path.sep}src${path.sep}`, `${path.sep}src${path.sep}`),
];

/** The first stack frame outside firebrand's code: the user's line. */
export function callerLine(): string | undefined {
  const frames = (new Error().stack ?? '').split('\n').slice(1);
  for (const frame of frames) {
    const match = /\(?([^()\s]+):(\d+):(\d+)\)?$/.exec(frame.trim());
    if (!match || match[1].startsWith('node:')) continue;
    const file = match[1];
    if (INTERNAL.some((folder) => file.startsWith(folder))) continue;
    return `${path.relative(process.cwd(), file)}:${match[2]}:${match[3]}`;
  }
  return undefined;
}

export class Trace {
  readonly nodes: GraphNode[] = [];
  private readonly scopes: string[] = [];
  private readonly stateNodes = new Map<object, number>();

  /** Each parameter and buffer of the model by its state-dict name, and each module by its path. */
  constructor(
    private readonly statePaths: Map<object, string>,
    private readonly modulePaths: Map<object, string>,
  ) {}

  /** The path of a module of the model, or a clear error for one that is not a field of it. */
  pathOf(module: object, className: string): string {
    const modulePath = this.modulePaths.get(module);
    if (modulePath === undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `${this.scope || 'forward'}: forward called a ${className} that is not a field of the model's modules; assign it to a field in the constructor`,
      );
    }
    return modulePath;
  }

  record(op: string, args: GraphArg[]): number {
    this.nodes.push({ op, args, scope: this.scope, at: callerLine() });
    return this.nodes.length - 1;
  }

  /**
   * Throws for the first op whose result nothing used (neither a later op nor forward's return). A
   * traced tensor has no value in JavaScript, so `if (x.min())` is always true and leaves x.min()
   * unused: that is how such a test shows. Reads of parameters, sizes and list items may go unused.
   */
  checkEveryResultUsed(outputs: readonly number[]): void {
    const used = new Set(outputs);
    const mark = (arg: GraphArg): void => {
      if (Array.isArray(arg)) arg.forEach(mark);
      else if (arg !== null && typeof arg === 'object') used.add(arg.v);
    };
    for (const node of this.nodes) node.args.forEach(mark);
    const unused = this.nodes.findIndex(
      (node, index) => !used.has(index) && !MAY_GO_UNUSED.has(node.op) && !node.op.startsWith('int'),
    );
    if (unused < 0) return;
    const node = this.nodes[unused];
    throw firebrandError(
      'ERR_FIREBRAND_TRACED_VALUE',
      `${node.scope || 'forward'}: ${node.op} at ${node.at ?? 'an unknown line'} computes a tensor that nothing uses. A traced tensor ` +
        'has no value in JavaScript (forward is recorded once and runs in C++): `if (x.min())` is always true, and `x.relu()` ' +
        'alone changes nothing. Use torch.where(), maskedFill() or clamp() for choices that depend on values, or remove the op',
    );
  }

  get scope(): string {
    return this.scopes[this.scopes.length - 1] ?? '';
  }

  readonly calls: ModuleCall[] = [];

  /** Runs a module's forward (`body`) with its ops attributed to `modulePath`, recording the call. */
  within<T>(
    modulePath: string,
    className: string,
    body: () => T,
    outputNode: (output: T) => number,
    kernel?: { decode: DecodeKernelSpec; inputs: number[] },
  ): T {
    const call: ModuleCall = { module: modulePath, className, depth: this.scopes.length, output: -1, ...kernel };
    this.calls.push(call);
    this.scopes.push(modulePath);
    try {
      const output = body();
      call.output = outputNode(output);
      return output;
    } finally {
      this.scopes.pop();
    }
  }

  /** The node that reads a parameter or buffer (one per trace), by its state-dict name. */
  stateNode(state: object): number {
    let node = this.stateNodes.get(state);
    if (node === undefined) {
      const name = this.statePaths.get(state);
      if (name === undefined) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_ARGUMENT',
          `${this.scope || 'forward'}: forward used a parameter or buffer that is not a field of the model's modules; assign it to a field in the constructor`,
        );
      }
      node = this.record('state', [name]);
      this.stateNodes.set(state, node);
    }
    return node;
  }
}

/** Ops whose result may go unused: reads of inputs and parameters, sizes, and items of a returned list. */
const MAY_GO_UNUSED = new Set(['input', 'state', 'size', 'listItem']);

let running: Trace | undefined;

/** The trace being recorded; outside one, a clear error for `what`. */
export function activeTrace(what: string): Trace {
  if (!running) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_STATE',
      `${what}: traced tensors exist only inside a module's forward while firebrand traces it (the Trainer and Model do)`,
    );
  }
  return running;
}

/** Runs `body` as a trace; nested traces are not allowed. */
export function recording<T>(trace: Trace, body: () => T): T {
  if (running)
    throw firebrandError('ERR_FIREBRAND_INVALID_STATE', 'a module is already being traced (forward called a trace?)');
  running = trace;
  try {
    return body();
  } finally {
    running = undefined;
  }
}

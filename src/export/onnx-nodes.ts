// Building ONNX nodes by hand: ops with generated names, constants as
// initializers, and the element types they take.
import type { OnnxAttribute, OnnxInitializer, OnnxNode } from '../onnx-graph';

export const DOUBLE = 11;
export const INT64 = 7;
export const FLOAT = 1;
export const STRING = 8;
export const ML_DOMAIN = 'ai.onnx.ml';

/** Nodes and initializers of a graph being built, each named by its op and a counter. */
export class Nodes {
  readonly nodes: OnnxNode[] = [];
  readonly initializers: OnnxInitializer[] = [];
  private count = 0;

  op(opType: string, inputs: string[], attributes: OnnxAttribute[] = [], domain?: string): string {
    const name = `preprocessing/${opType}_${this.count++}`;
    this.nodes.push({ opType, name, inputs, outputs: [name], attributes, ...(domain ? { domain } : {}) });
    return name;
  }

  constant(values: number[], dataType: number, dims: number[] = [values.length]): string {
    const name = `preprocessing/const_${this.count++}`;
    const data =
      dataType === INT64
        ? new Uint8Array(BigInt64Array.from(values, (value) => BigInt(value)).buffer)
        : dataType === FLOAT
          ? new Uint8Array(Float32Array.from(values).buffer)
          : new Uint8Array(Float64Array.from(values).buffer);
    this.initializers.push({ name, dataType, dims, data });
    return name;
  }
}

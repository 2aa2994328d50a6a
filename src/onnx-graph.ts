// The ONNX graph the native export builds (native/binding/onnx_convert.h), as
// plain data: nodes in order, initializers with their bytes, and the graph's
// inputs and outputs with their dims.
export type OnnxAttribute =
  | { name: string; kind: 'int'; value: number }
  | { name: string; kind: 'float'; value: number }
  | { name: string; kind: 'string'; value: string }
  | { name: string; kind: 'ints'; value: number[] }
  | { name: string; kind: 'floats'; value: number[] }
  | { name: string; kind: 'strings'; value: string[] };

export interface OnnxNode {
  opType: string;
  name: string;
  inputs: string[];
  outputs: string[];
  attributes: OnnxAttribute[];
  /** The operator set's domain; absent: ONNX's own. */
  domain?: string;
}

/** A size, a dynamic axis' label, or null: unknown. */
export type OnnxDim = number | string | null;

export interface OnnxValueInfo {
  name: string;
  /** ONNX's TensorProto.DataType. */
  dataType: number;
  dims: OnnxDim[];
}

export interface OnnxInitializer {
  name: string;
  dataType: number;
  dims: number[];
  data: Uint8Array;
}

export interface OnnxGraph {
  opset: number;
  /** Other operator sets the nodes use, by domain: their versions. */
  domains?: Record<string, number>;
  nodes: OnnxNode[];
  initializers: OnnxInitializer[];
  inputs: OnnxValueInfo[];
  outputs: OnnxValueInfo[];
}

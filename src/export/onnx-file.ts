// An ONNX graph encoded as a ModelProto with ONNX's own protobuf schema
// (onnx-proto: onnx.proto compiled for protobufjs), written whole or not at all.
import fs from 'node:fs';
import path from 'node:path';

import { onnx } from 'onnx-proto';

import { firebrandError } from '../errors';
import { LIBRARY_VERSION } from '../version';
import type { OnnxAttribute, OnnxGraph, OnnxValueInfo } from '../onnx-graph';

// ONNX IR version 8 (ONNX 1.10-1.13) reads opsets up to 18.
const IR_VERSION = 8;
// protobuf's limit on one message; larger models need ONNX's external data.
const PROTOBUF_LIMIT = 2 ** 31 - 1;

const text = (value: string) => Buffer.from(value, 'utf8');

function attribute(given: OnnxAttribute): onnx.IAttributeProto {
  const { AttributeType } = onnx.AttributeProto;
  switch (given.kind) {
    case 'int':
      return { name: given.name, type: AttributeType.INT, i: given.value };
    case 'float':
      return { name: given.name, type: AttributeType.FLOAT, f: given.value };
    case 'string':
      return { name: given.name, type: AttributeType.STRING, s: text(given.value) };
    case 'ints':
      return { name: given.name, type: AttributeType.INTS, ints: given.value };
    case 'floats':
      return { name: given.name, type: AttributeType.FLOATS, floats: given.value };
    case 'strings':
      return { name: given.name, type: AttributeType.STRINGS, strings: given.value.map(text) };
  }
}

function valueInfo(info: OnnxValueInfo): onnx.IValueInfoProto {
  const dim = info.dims.map((size) =>
    typeof size === 'number' ? { dimValue: size } : typeof size === 'string' ? { dimParam: size } : {},
  );
  return { name: info.name, type: { tensorType: { elemType: info.dataType, shape: { dim } } } };
}

/** The graph as ONNX's ModelProto bytes. */
export function encodeOnnxModel(graph: OnnxGraph, graphName: string): Uint8Array {
  const weightBytes = graph.initializers.reduce((total, tensor) => total + tensor.data.byteLength, 0);
  if (weightBytes >= PROTOBUF_LIMIT) {
    throw firebrandError(
      'ERR_FIREBRAND_NOT_EXPORTABLE',
      `exportOnnx: the model's tensors take ${weightBytes} bytes, over protobuf's 2 GiB limit on one ONNX file; ` +
        'ONNX external data is not written yet',
    );
  }
  const model = onnx.ModelProto.create({
    irVersion: IR_VERSION,
    producerName: 'firebrand',
    producerVersion: LIBRARY_VERSION,
    opsetImport: [
      { domain: '', version: graph.opset },
      ...Object.entries(graph.domains ?? {}).map(([domain, version]) => ({ domain, version })),
    ],
    graph: {
      name: graphName,
      node: graph.nodes.map((node) => ({
        name: node.name,
        opType: node.opType,
        ...(node.domain ? { domain: node.domain } : {}),
        input: node.inputs,
        output: node.outputs,
        attribute: node.attributes.map(attribute),
      })),
      initializer: graph.initializers.map((tensor) => ({
        name: tensor.name,
        dataType: tensor.dataType,
        dims: tensor.dims,
        rawData: tensor.data,
      })),
      input: graph.inputs.map(valueInfo),
      output: graph.outputs.map(valueInfo),
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

/** Writes `bytes` to `file` through a temporary sibling, so a failed write leaves no partial file. */
export async function writeWhole(file: string, bytes: Uint8Array): Promise<void> {
  const temporary = `${path.resolve(file)}.tmp-${process.pid}`;
  try {
    // The folder is made as trainer.save makes its own.
    await fs.promises.mkdir(path.dirname(path.resolve(file)), { recursive: true });
    await fs.promises.writeFile(temporary, bytes);
    await fs.promises.rename(temporary, file);
  } catch (error) {
    await fs.promises.rm(temporary, { force: true });
    throw error;
  }
}

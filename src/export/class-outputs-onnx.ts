// A classifier's answers as outputs of its ONNX file (exportOnnx's
// classOutputs), beside its logits: `probabilities` (Softmax over the classes,
// as predictProba) and `label` (ArgMax, then the class name by ai.onnx.ml's
// LabelEncoder, or the class index where the model has no named classes, as
// predictLabels), so that a service in another runtime gets them from the file.
import { firebrandError } from '../errors';
import type { OnnxGraph, OnnxInitializer, OnnxNode } from '../onnx-graph';
import { FLOAT, INT64, ML_DOMAIN, STRING } from './onnx-nodes';

/** `graph` with the outputs `probabilities` and `label` computed from its one output, logits [batch, classes]. */
export function withClassOutputs(graph: OnnxGraph, classes: (string | number)[] | undefined): OnnxGraph {
  const [logits, ...others] = graph.outputs;
  const classCount = logits?.dims[1];
  const wrongCount = typeof classCount === 'number' && classes !== undefined && classCount !== classes.length;
  if (others.length > 0 || logits.dims.length !== 2 || wrongCount) {
    throw firebrandError(
      'ERR_FIREBRAND_NOT_EXPORTABLE',
      `exportOnnx: classOutputs needs one output of logits [batch, classes]${classes ? ` (${classes.length} classes)` : ''}; ` +
        `the model gives ${graph.outputs.map((output) => `${output.name} [${output.dims.join(', ')}]`).join(', ')}`,
    );
  }
  const node = (opType: string, inputs: string[], output: string, attributes: OnnxNode['attributes'] = []) =>
    ({ opType, name: `classes/${output}`, inputs, outputs: [output], attributes }) as OnnxNode;
  const axis = { name: 'axis', kind: 'int', value: 1 } as const;
  const nodes = [
    node('Softmax', [logits.name], 'probabilities', [axis]),
    node('ArgMax', [logits.name], 'classes/index', [axis, { name: 'keepdims', kind: 'int', value: 0 }]),
  ];
  const initializers: OnnxInitializer[] = [];
  let labelType = INT64;
  if (classes === undefined) {
    nodes.push(node('Identity', ['classes/index'], 'label'));
  } else if (classes.every((name) => typeof name === 'number')) {
    const values = BigInt64Array.from(classes as number[], (value) => BigInt(value));
    initializers.push({
      name: 'classes/values',
      dataType: INT64,
      dims: [classes.length],
      data: new Uint8Array(values.buffer),
    });
    nodes.push(node('Gather', ['classes/values', 'classes/index'], 'label'));
  } else {
    labelType = STRING;
    nodes.push({
      ...node('LabelEncoder', ['classes/index'], 'label', [
        { name: 'keys_int64s', kind: 'ints', value: classes.map((_, k) => k) },
        { name: 'values_strings', kind: 'strings', value: classes.map(String) },
        { name: 'default_string', kind: 'string', value: '' },
      ]),
      domain: ML_DOMAIN,
    });
  }
  return {
    ...graph,
    domains: { ...(graph.domains ?? {}), ...(labelType === STRING ? { [ML_DOMAIN]: 2 } : {}) },
    nodes: [...graph.nodes, ...nodes],
    initializers: [...graph.initializers, ...initializers],
    outputs: [
      logits,
      { name: 'probabilities', dataType: FLOAT, dims: [logits.dims[0], classCount ?? null] },
      { name: 'label', dataType: labelType, dims: [logits.dims[0]] },
    ],
  };
}

// A fitted TablePreprocessor as ONNX nodes in front of the model's graph, so an
// exported table model takes the raw columns as predict takes records: one
// input per column, numbers as float64 (NaN: missing), text as strings (''
// : missing) and date/times as float64 seconds (datetime-onnx.ts). The arithmetic is the preprocessor's own, in float64, in its
// order (numeric-columns.ts, categorical-columns.ts); text categories are
// looked up with ai.onnx.ml's LabelEncoder.
import { firebrandError } from '../errors';
import type { Cell } from '../tables/column-statistics';
import type { SavedTablePreprocessor } from '../preprocessing/table-preprocessor';
import type { OnnxGraph, OnnxNode, OnnxValueInfo } from '../onnx-graph';
import { datetimeFeatures } from './datetime-onnx';
import { DOUBLE, FLOAT, INT64, ML_DOMAIN, Nodes, STRING } from './onnx-nodes';

const isText = (categories: Cell[]) => categories.some((category) => typeof category === 'string');

/** The graph's inputs (the raw columns) and the nodes making the model's fields from them. */
function preprocessingNodes(saved: SavedTablePreprocessor): {
  inputs: OnnxValueInfo[];
  nodes: Nodes;
  fields: Record<string, string>;
} {
  const b = new Nodes();
  const inputs: OnnxValueInfo[] = [];
  const column = (name: string, dataType: number) => {
    if (!inputs.some((input) => input.name === name)) inputs.push({ name, dataType, dims: ['batch'] });
    return b.op('Unsqueeze', [name, b.constant([1], INT64)]); // [batch, 1]
  };
  const floats: string[] = [];
  const indices: string[] = [];
  for (const { columns: group, fitted } of saved.numeric) {
    const raw = group.columns.map((name) => column(name, DOUBLE));
    const missing = raw.map((x) => b.op('IsNaN', [x]));
    const outputs = raw.map((x, i) =>
      fitted.fill ? b.op('Where', [missing[i], b.constant([fitted.fill[i]], DOUBLE, []), x]) : x,
    );
    for (const name of fitted.indicated) {
      outputs.push(b.op('Cast', [missing[group.columns.indexOf(name)]], [{ name: 'to', kind: 'int', value: DOUBLE }]));
    }
    const scaling = fitted.scaling;
    floats.push(
      ...outputs.map((x, i) =>
        scaling === undefined
          ? x
          : 'shift' in scaling
            ? b.op('Div', [
                b.op('Sub', [x, b.constant([scaling.shift[i]], DOUBLE, [])]),
                b.constant([scaling.divide[i]], DOUBLE, []),
              ])
            : b.op('Add', [
                b.op('Mul', [x, b.constant([scaling.multiply[i]], DOUBLE, [])]),
                b.constant([scaling.add[i]], DOUBLE, []),
              ]),
      ),
    );
  }
  for (const { columns: group, fitted } of saved.datetime ?? []) {
    group.columns.forEach((name, i) =>
      floats.push(...datetimeFeatures(b, column(name, DOUBLE), group.parts, fitted, i)),
    );
  }
  for (const { columns: group, fitted } of saved.categorical) {
    if (group.handleUnknown !== 'ignore') {
      throw firebrandError(
        'ERR_FIREBRAND_NOT_EXPORTABLE',
        `exportOnnx: the categorical columns ${group.columns.join(', ')} refuse unseen categories (handleUnknown: 'error'), ` +
          "which an ONNX graph cannot raise; fit the TablePreprocessor with handleUnknown: 'ignore' to export its preprocessing",
      );
    }
    group.columns.forEach((name, i) => {
      const categories = fitted.categories[i];
      const fill = fitted.fill?.[i];
      const unseen = categories.length;
      // A missing cell is the fill's category, or the missing category (null, when training rows had one).
      const missingIndex = fill !== undefined ? categories.indexOf(fill) : categories.indexOf(null);
      let index: string;
      if (isText(categories)) {
        const known = categories.map((category, k) => [category, k] as const).filter(([category]) => category !== null);
        const keys = known.map(([category]) => String(category));
        const values = known.map(([, k]) => k);
        if (missingIndex >= 0) {
          keys.push('');
          values.push(missingIndex);
        }
        index = b.op(
          'LabelEncoder',
          [column(name, STRING)],
          [
            { name: 'keys_strings', kind: 'strings', value: keys },
            { name: 'values_int64s', kind: 'ints', value: values },
            { name: 'default_int64', kind: 'int', value: unseen },
          ],
          ML_DOMAIN,
        );
      } else {
        const x = column(name, DOUBLE);
        index = b.constant([unseen], INT64, []);
        categories.forEach((category, k) => {
          const hit =
            category === null ? b.op('IsNaN', [x]) : b.op('Equal', [x, b.constant([category as number], DOUBLE, [])]);
          index = b.op('Where', [hit, b.constant([k], INT64, []), index]);
        });
        if (missingIndex >= 0)
          index = b.op('Where', [b.op('IsNaN', [x]), b.constant([missingIndex], INT64, []), index]);
      }
      if (group.encode === 'index') {
        indices.push(index);
      } else {
        // [batch, 1] against 0..K-1: a 0/1 column per category, none for the unseen index, as 'ignore' does.
        const each = b.constant(
          categories.map((_, k) => k),
          INT64,
        );
        const oneHot = b.op('Cast', [b.op('Equal', [index, each])], [{ name: 'to', kind: 'int', value: DOUBLE }]);
        floats.push(oneHot);
      }
    });
  }
  const fields: Record<string, string> = {};
  const concat = (parts: string[]) =>
    parts.length === 1 ? parts[0] : b.op('Concat', parts, [{ name: 'axis', kind: 'int', value: 1 }]);
  if (floats.length > 0) fields.input = b.op('Cast', [concat(floats)], [{ name: 'to', kind: 'int', value: FLOAT }]);
  if (indices.length > 0) fields.categories = concat(indices);
  return { inputs, nodes: b, fields };
}

/** `graph` taking the raw columns: the preprocessing's nodes feed the model's fields. */
export function withTablePreprocessing(graph: OnnxGraph, saved: SavedTablePreprocessor): OnnxGraph {
  const { inputs, nodes, fields } = preprocessingNodes(saved);
  const modelInputs = graph.inputs.map((input) => input.name);
  const missing = modelInputs.filter((name) => fields[name] === undefined);
  if (missing.length > 0) {
    throw firebrandError(
      'ERR_FIREBRAND_NOT_EXPORTABLE',
      `exportOnnx: the model takes ${missing.join(', ')}, which its table preprocessing does not make (it makes ${Object.keys(fields).join(', ')})`,
    );
  }
  const renamed = (name: string) => fields[name] ?? name;
  const model = { ...graph, nodes: graph.nodes.map((node) => ({ ...node, inputs: node.inputs.map(renamed) })) };
  const whole = saved.target?.scaling ? unscaledOutput(model, saved.target.scaling, nodes) : model;
  return {
    ...whole,
    domains: { ...(graph.domains ?? {}), [ML_DOMAIN]: 2 },
    inputs,
    nodes: [...nodes.nodes, ...whole.nodes],
    initializers: [...nodes.initializers, ...graph.initializers],
  };
}

/**
 * `graph` whose output is in its target's own units (y * scale + mean, in float32, as predict does) where
 * the training targets were standardized: the model's output is renamed and the two nodes make the old name.
 */
function unscaledOutput(graph: OnnxGraph, scaling: { mean: number; scale: number }, b: Nodes): OnnxGraph {
  const [output] = graph.outputs;
  const scaled = `${output.name}/standardized`;
  const rename = (name: string) => (name === output.name ? scaled : name);
  const [scale, mean] = [b.constant([scaling.scale], FLOAT, []), b.constant([scaling.mean], FLOAT, [])];
  const unscale: OnnxNode[] = [
    {
      opType: 'Mul',
      name: 'postprocessing/scale',
      inputs: [scaled, scale],
      outputs: ['postprocessing/scaled'],
      attributes: [],
    },
    {
      opType: 'Add',
      name: 'postprocessing/shift',
      inputs: ['postprocessing/scaled', mean],
      outputs: [output.name],
      attributes: [],
    },
  ];
  const model = graph.nodes.map((node) => ({
    ...node,
    inputs: node.inputs.map(rename),
    outputs: node.outputs.map(rename),
  }));
  return { ...graph, nodes: [...model, ...unscale] };
}

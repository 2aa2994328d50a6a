// Graphs saved before parameterless layers became modules (firebrand 0.1.0
// through commit d5f4b09) called them as built-in layers: a "layer" node at the
// layer's path. Each such call becomes the ops the layer's module records now,
// so those saved models load and predict as they did.
import { isFunctionalLayerType, FunctionalLayer, type FunctionalLayerSpec } from './module/functional-layers';
import type { GraphModelSpec, ModuleNode } from './module/tracer';
import { type GraphArg, type GraphNode, recording, Trace } from './module/trace';
import { Tensor } from './module/tensor';

/** The paths of the module tree's parameterless layers, each made a plain module node (no C++ layer). */
function takeFunctionalLayers(node: ModuleNode, path: string, found: Map<string, FunctionalLayerSpec>): void {
  if (node.layer && isFunctionalLayerType(node.layer.type as string)) {
    found.set(path, node.layer as unknown as FunctionalLayerSpec);
    delete node.layer;
  }
  for (const child of node.children)
    takeFunctionalLayers(child.module, path ? `${path}.${child.name}` : child.name, found);
}

/** The ops the layer's forward records, over node 0 (its input); `output` is the node it returns. */
function layerOps(spec: FunctionalLayerSpec, scope: string): { nodes: GraphNode[]; output: number } {
  const trace = new Trace(new Map(), new Map());
  return recording(trace, () => {
    const input = new Tensor({ trace, id: trace.record('input', ['x']) });
    const layer = new FunctionalLayer(spec);
    const output = trace.within(
      scope,
      layer.className,
      () => layer.forward(input),
      () => -1,
    );
    return { nodes: trace.nodes, output: output.valueIn(trace) };
  });
}

export function upgradeGraph(spec: GraphModelSpec): GraphModelSpec {
  const layers = new Map<string, FunctionalLayerSpec>();
  const modules = structuredClone(spec.modules);
  takeFunctionalLayers(modules, '', layers);
  if (layers.size === 0) return spec;
  const moved: number[] = []; // by old node: its new index
  const nodes: GraphNode[] = [];
  for (const node of spec.graph.nodes) {
    const layer = node.op === 'layer' ? layers.get(node.args[0] as string) : undefined;
    if (!layer) {
      moved.push(nodes.length);
      nodes.push({ ...node, args: node.args.map((arg) => renumbered(arg, (v) => moved[v])) });
      continue;
    }
    const input = moved[(node.args[1] as { v: number }).v];
    const ops = layerOps(layer, node.scope);
    const base = nodes.length - 1; // the layer's node i (i >= 1) lands at base + i
    for (const op of ops.nodes.slice(1)) {
      nodes.push({
        ...op,
        ...(node.at ? { at: node.at } : {}),
        args: op.args.map((arg) => renumbered(arg, (v) => (v === 0 ? input : base + v))),
      });
    }
    moved.push(ops.output === 0 ? input : base + ops.output);
  }
  const graph = {
    ...spec.graph,
    nodes,
    outputs: spec.graph.outputs.map((output) => moved[output]),
    calls: spec.graph.calls.map((call) => ({
      ...call,
      output: call.output < 0 ? call.output : moved[call.output],
      ...(call.inputs && { inputs: call.inputs.map((input) => (input < 0 ? input : moved[input])) }),
    })),
  };
  const construction = spec.construction.filter((step) => !('layer' in step && layers.has(step.layer)));
  return { ...spec, modules, construction, graph };
}

/** `arg` with each node it names ({ v }) given its new index. */
function renumbered(arg: GraphArg, index: (v: number) => number): GraphArg {
  if (Array.isArray(arg)) return arg.map((item) => renumbered(item, index));
  if (arg !== null && typeof arg === 'object') return { v: index(arg.v) };
  return arg;
}

// What a Trainer or Model builds: a sequential model's layers, a TorchScript
// file or source, or a traced TypeScript module; and their resolution into
// what C++ builds (every layer checked and defaulted, modules traced).
import { firebrandError } from '../errors';
import { layers, MULTI_TENSOR } from './layer-schemas';
import type { LayerSpec } from './layer-specs';
import { FunctionalLayer, layerModule } from './module/functional-layers';
import { Layer, Module, Sequential } from './module/module';
import { type GraphModelSpec, traceModule } from './module/tracer';
import { upgradeGraph } from './upgrade-graph';

/** A model that applies its layers in order, like PyTorch's nn.Sequential. */
export interface SequentialSpec {
  type: 'sequential';
  layers: LayerSpec[];
}

/** A TorchScript module saved by torch.jit.save, trained in place (its own training_step if it has one). */
export interface TorchScriptFileSpec {
  type: 'torchscript';
  path: string;
}

/** A parameter of a script model: its name (self.<name> in the source), values and shape. */
export interface ScriptParameter {
  name: string;
  data: Float32Array | Float64Array;
  shape: number[];
}

/** A TorchScript module written in TypeScript: methods as TorchScript source, plus named parameters. */
export interface ScriptSpec {
  type: 'script';
  source: string;
  parameters: ScriptParameter[];
}

/** A model the Trainer can build: sequential layers, a TorchScript file, TorchScript source, or a traced TypeScript module. */
export type ModelSpec = SequentialSpec | TorchScriptFileSpec | ScriptSpec | GraphModelSpec;

/** What a Trainer or Model takes as its model: a spec, or a TypeScript module (traced once). */
export type ModelLike = ModelSpec | Module;

/** Each layer of a sequential model checked and defaulted; errors name it layers[i], as nn.sequential's users know it. */
function resolveSequentialLayers(specs: unknown): LayerSpec[] {
  if (!Array.isArray(specs)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'model.layers must be an array of layers (nn.linear(...), ...)',
    );
  }
  if (specs.length === 0)
    throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'model: a sequential model needs at least one layer');
  const resolved = specs.map((layer, i) => layers.resolve(layer, `layers[${i}]`));
  const multi = resolved.findIndex((layer) => MULTI_TENSOR.includes(layer.type as string));
  if (multi >= 0) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `layers[${multi}] (${resolved[multi].type}) takes or returns several tensors, which a sequential model cannot pass on; use it in a module's forward (const [out, h] = this.rnn.forward(x))`,
    );
  }
  return resolved as unknown as LayerSpec[];
}

/** The fields the model's forward takes, in order: a traced module's inputFields, else 'input'. */
export function modelInputFields(spec: ModelSpec): string[] {
  return spec.type === 'graph' ? spec.graph.inputs : ['input'];
}

/**
 * The model as C++ builds it: a TypeScript module, or a sequential model (its layers checked first),
 * traced; a graph saved before parameterless layers were modules, upgraded; a TorchScript model as is.
 */
export function resolveModelSpec(model: ModelLike): ModelSpec {
  if (typeof model !== 'object' || model === null) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'model must be an nn.Module, nn.sequential(...), nn.torchScript(path) or nn.script(...)',
    );
  }
  if (
    model instanceof Sequential &&
    model.namedChildren().every(([, child]) => child instanceof Layer || child instanceof FunctionalLayer)
  ) {
    resolveSequentialLayers(model.layers);
  }
  if (model instanceof Module) return traceModule(model);
  if (model.type === 'sequential')
    return traceModule(new Sequential(resolveSequentialLayers(model.layers).map(layerModule)));
  if (model.type === 'graph') return upgradeGraph(model);
  return model;
}

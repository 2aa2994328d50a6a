// A config made native: setup's runtime settings, the engine spec C++ builds
// the model, loss and optimizers from, joining a distributed run, a
// checkpoint's weights loaded into the model or modules inside it, and a
// fit's options.
import { deviceForRank, type DistributedPlace } from '../distributed/torchrun-environment';
import { native, type NativeEngine } from '../native';
import type { NativeFitOptions } from '../native-specs';
import { withSyncBatchNorm } from '../nn/sync-batch-norm';
import { resolveModelSpec, type ModelSpec } from '../nn/model-spec';
import { pretrainedSourcesIn } from '../pretrained/from-pretrained';
import { loadPretrainedWeights, namesLoadedFrom } from '../pretrained/load-weights';
import { runtimeInfo, setNumThreads, useDeterministicAlgorithms, warnIfSlowBlas } from '../runtime';
import type { ResolvedConfig } from './config';
import { allLinearLayers, type ResolvedLora, warnOfTiedAdapters } from './lora';
import { checkMetrics } from './metrics';
import { resolveObjectives } from './objective-schemas';
import type { ModelConfiguration, OptimizerConfiguration } from './trainer-options';

/** The built engine and the spec its model was built from. */
export interface BuiltEngine {
  engine: NativeEngine;
  modelSpec: ModelSpec;
}

const listed = (patterns: string | string[] | undefined) => (patterns === undefined ? undefined : [patterns].flat());

/** Builds the engine for `models` and `optimizers` under `config`, joined to the run at `place` when there is one. */
export async function buildEngine(
  config: ResolvedConfig,
  models: ModelConfiguration,
  optimizers: OptimizerConfiguration,
  lora: ResolvedLora | undefined,
  place: DistributedPlace | undefined,
): Promise<BuiltEngine> {
  warnIfSlowBlas();
  setNumThreads(config.numThreads);
  if (config.deterministic) useDeterministicAlgorithms(true);
  const objectives = resolveObjectives(models.loss, optimizers);
  checkMetrics(config.metrics, objectives.loss?.name);
  // 'all-linear' becomes the layers' paths here, in the trainer's one lora object, which saveAdapter writes.
  if (lora?.targetModules === 'all-linear') lora.targetModules = allLinearLayers(models.model);
  const resolved = resolveModelSpec(models.model);
  const modelSpec = config.distributed.syncBatchNorm ? withSyncBatchNorm(resolved) : resolved;
  const sources = pretrainedSourcesIn(models.model);
  const engine = new native.NativeEngine({
    model: await withValuesLoadedLater(modelSpec, sources),
    ...objectives,
    device: place === undefined ? config.device : deviceForRank(config.device, place, runtimeInfo().cudaAvailable),
    seed: config.seed,
    metrics: [...config.metrics],
    mixedPrecision: config.mixedPrecision,
    gradScaler: { ...config.gradScaler },
    ema: { ...config.ema },
    checkFiniteInputs: config.checkFiniteInputs,
    lossOutput: config.lossOutput,
    freeze: listed(config.freeze),
    lora: lora && { ...lora, targetModules: [lora.targetModules].flat() },
    int8Roots: int8RootsIn(models.model),
    activationCheckpointing: listed(config.activationCheckpointing),
  });
  if (lora !== undefined) warnOfTiedAdapters(engine.model.description);
  // Blocks (off the event loop) until every rank has joined; rank 0's weights win.
  if (place !== undefined) {
    const { rank, worldSize, masterAddr, masterPort, agentStorePrefix } = place;
    await engine.distribute({ rank, worldSize, masterAddr, masterPort, agentStorePrefix, ...config.distributed });
  }
  // A checkpoint's weights (fromPretrained, torchvision.models), for the model or modules inside it:
  // every rank reads the same files.
  for (const { path: prefix, module, source } of sources) {
    await loadPretrainedWeights(engine, module, source, prefix);
  }
  const int8Roots = int8RootsIn(models.model);
  if (int8Roots.length > 0) await engine.quantizeInt8(int8Roots);
  return { engine, modelSpec };
}

/**
 * The spec C++ builds: a traced model's with the state names its checkpoints fill right after the build, whose
 * initial values are then not drawn (transformers' from_pretrained initializes only what its checkpoint lacks).
 * The spec itself, which a saved model keeps, is left as it is.
 */
async function withValuesLoadedLater(
  spec: ModelSpec,
  sources: ReturnType<typeof pretrainedSourcesIn>,
): Promise<ModelSpec> {
  if (spec.type !== 'graph' || sources.length === 0) return spec;
  const names: string[] = [];
  for (const { path, module, source } of sources) names.push(...(await namesLoadedFrom(module, source, path)));
  return { ...spec, valuesLoadedLater: names };
}

/** The paths of the checkpoints inside `model` that fromPretrained was asked to quantize to int8. */
function int8RootsIn(model: unknown): string[] {
  return pretrainedSourcesIn(model)
    .filter(({ source }) => source.quantize === 'int8')
    .map(({ path }) => path);
}

/** A fit's options as C++ takes them from `config`: sent once, to beginFit. */
export function nativeFitOptions(config: ResolvedConfig): NativeFitOptions {
  return {
    sampler: { batchSize: config.batchSize, shuffle: config.shuffle, dropLast: config.dropLast, seed: config.seed },
    loader: {
      numWorkers: config.numWorkers === 'auto' ? undefined : config.numWorkers,
      prefetchFactor: config.prefetchFactor,
    },
    step: {
      gradientAccumulationSteps: config.gradientAccumulationSteps,
      maxGradNorm: config.maxGradNorm,
      clipValue: config.clipValue,
      nonFiniteLoss: config.nonFiniteLoss,
    },
    logEvery: config.logEvery,
    progressIntervalMs: 200,
  };
}

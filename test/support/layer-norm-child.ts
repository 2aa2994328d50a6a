// Run by test/layer-norm-lowering.test.ts under a FIREBRAND_CPU_BASELINE: prints as JSON the lowered and
// layer-by-layer outputs of its LayerNorm model.
import { Trainer, type TensorData } from '../../src';
import { normInputs, Norms, ROWS, WIDTH } from './layer-norms';

async function main(): Promise<void> {
  const trainer = new Trainer({ model: new Norms(), config: { seed: 2, progressBar: false } });
  const shape = [3, ROWS, WIDTH];
  const flat = (outputs: TensorData[]) => outputs.flatMap((output) => Array.from(output.data as Float32Array));
  const lowered = flat(await trainer.predict<TensorData[]>(normInputs(3), shape));
  const layerByLayer = flat(await trainer.predict<TensorData[]>(normInputs(3), shape, { optimizeForInference: false }));
  process.stdout.write(JSON.stringify({ lowered, layerByLayer }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

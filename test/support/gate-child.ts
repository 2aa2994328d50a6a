// Run by test/channels-last-maps.test.ts under FIREBRAND_CPU_BASELINE: prints as JSON the lowered and
// layer-by-layer outputs of its squeeze-and-excitation model.
import { Trainer, type TensorData } from '../../src';
import { GateNet, gateInputs, SHAPE } from './gate-net';

async function main(): Promise<void> {
  const trainer = new Trainer({ model: new GateNet(), config: { seed: 4, progressBar: false } });
  const flat = (outputs: TensorData[]) => outputs.map((output) => Array.from(output.data as Float32Array));
  const lowered = flat(await trainer.predict<TensorData[]>(gateInputs(), SHAPE));
  const layerByLayer = flat(await trainer.predict<TensorData[]>(gateInputs(), SHAPE, { optimizeForInference: false }));
  process.stdout.write(JSON.stringify({ lowered, layerByLayer }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

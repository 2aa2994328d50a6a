// Run by test/inference-attention.test.ts, with and without FIREBRAND_CPU_BASELINE: prints as JSON each
// shape's lowered and layer-by-layer predict outputs.
import { Trainer } from '../../src';
import { Attend, attendShapes, inputsFor } from './attend-module';

async function main(): Promise<void> {
  const outputs = [];
  for (const [index, shape] of attendShapes.entries()) {
    const trainer = new Trainer({ model: new Attend(shape), config: { seed: index, progressBar: false } });
    const { data, shape: inputShape } = inputsFor(shape);
    const lowered = await trainer.predict(data, inputShape);
    const layerByLayer = await trainer.predict(data, inputShape, { optimizeForInference: false });
    outputs.push({ lowered: Array.from(lowered.data), layerByLayer: Array.from(layerByLayer.data) });
  }
  process.stdout.write(JSON.stringify(outputs));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

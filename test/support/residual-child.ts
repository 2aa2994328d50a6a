// Run by test/residual-fusion.test.ts, under oneDNN's verbose mode: predicts ResidualNet lowered and as written
// at batch 2 and 3, and prints their outputs as JSON after oneDNN's lines.
import { Trainer, type TensorData } from '../../src';
import { ResidualNet, residualInputs, SHAPE } from './residual-net';

async function main(): Promise<void> {
  const trainer = new Trainer({ model: new ResidualNet(), config: { seed: 5, progressBar: false, numThreads: 1 } });
  const outputs: Record<string, number[][]> = {};
  for (const batch of [2, 3]) {
    for (const lowered of [true, false]) {
      const shape = [batch, ...SHAPE.slice(1)];
      const predicted = await trainer.predict<TensorData[]>(residualInputs(batch), shape, {
        optimizeForInference: lowered,
      });
      outputs[`${batch} ${lowered ? 'lowered' : 'as written'}`] = predicted.map((o) =>
        Array.from(o.data as Float32Array),
      );
    }
  }
  console.log(JSON.stringify(outputs));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

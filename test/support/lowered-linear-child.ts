// Run by test/frozen-linear.test.ts: `predict`s a small perceptron's rows CALLS times, lowered for inference
// or not (argv[2]: 'lowered' or 'layer-by-layer'), and prints as JSON the products oneDNN's sgemm and
// firebrand's packed oneDNN matmuls computed during them, and the outputs.
import { nn, runtimeInfo, Trainer } from '../../src';

const CALLS = 3;

async function main(): Promise<void> {
  const optimizeForInference = process.argv[2] === 'lowered';
  const trainer = new Trainer({
    model: nn.sequential(nn.linear(27, 41), nn.gelu(), nn.linear(41, 35), nn.tanh(), nn.linear(35, 5, { bias: false })),
    config: { seed: 3, progressBar: false, numThreads: 1 },
  });
  await trainer.setup();
  const rows = Float32Array.from({ length: 9 * 27 }, (_, i) => Math.sin(i * 0.61) - Math.cos(i * 0.07));
  const before = runtimeInfo();
  let outputs: number[] = [];
  for (let call = 0; call < CALLS; call++) {
    outputs = Array.from((await trainer.predict(rows, [9, 27], { optimizeForInference })).data as Float32Array);
  }
  const after = runtimeInfo();
  process.stdout.write(
    JSON.stringify({
      sgemmProducts: after.onednnSgemmProducts - before.onednnSgemmProducts,
      matmulProducts: after.onednnMatmulProducts - before.onednnMatmulProducts,
      outputs,
    }),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

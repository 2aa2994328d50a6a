// Run by test/fused-optimizers.test.ts with ATEN_CPU_CAPABILITY=default
// (libtorch's default kernels, which round x + alpha * y twice): prints which
// optimizers fuse there and, for each, 'same bits' when its fused step agrees
// with libtorch's per-op step.
import { OptimizerSpec, runtimeInfo } from '../../src';
import { bothSteps, firstDifference, mlp } from './fused-optimizer-runs';

const optimizers: OptimizerSpec[] = [
  { name: 'sgd', lr: 0.05, momentum: 0.9, nesterov: true, weightDecay: 0.01 },
  { name: 'adam', lr: 0.01, weightDecay: 0.01, amsgrad: true },
  { name: 'adamw', lr: 0.01 },
];

async function main(): Promise<void> {
  const results: Record<string, string> = {};
  for (const optimizer of optimizers) {
    const [fused, perOp] = await bothSteps(mlp, optimizer);
    results[optimizer.name] = firstDifference(fused, perOp) ?? 'same bits';
  }
  process.stdout.write(`${JSON.stringify({ fused: runtimeInfo().fusedOptimizers, results })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});

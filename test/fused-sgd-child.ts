// Run by test/fused-sgd.test.ts with ATEN_CPU_CAPABILITY=default (libtorch's
// default kernels, which round x + alpha * y twice): prints 'same bits' when
// the fused step agrees with libtorch's per-op step there too.
import { bothSteps, firstDifference, mlp } from './fused-sgd-runs';

async function main(): Promise<void> {
  const [fused, perOp] = await bothSteps(mlp, { name: 'sgd', lr: 0.05, momentum: 0.9, nesterov: true, weightDecay: 0.01 });
  process.stdout.write(`${firstDifference(fused, perOp) ?? 'same bits'}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});

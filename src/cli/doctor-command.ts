// `firebrand doctor`: what this install runs on — the binary loaded, the
// libtorch it was built against and the one loaded, CUDA, the c10d backends,
// BLAS, threads — and whether one training step works. Exit code 1 when the
// step fails, or when the binary cannot load (then it says why and the fix).
import fs from 'node:fs';

import { Dataset } from '../data/dataset';
import { native, nativeBinary } from '../native';
import { nn } from '../nn/layers';
import { setNumThreads } from '../runtime';
import { resolveConfig } from '../training/config';
import { Trainer } from '../training/trainer';
import { LIBRARY_VERSION } from '../version';

/** The libtorch_cpu shared object this process mapped (Linux), or undefined. */
function loadedLibtorch(): string | undefined {
  try {
    const maps = fs.readFileSync('/proc/self/maps', 'utf8');
    return /\s(\/\S*libtorch_cpu\.so[\d.]*)$/m.exec(maps)?.[1];
  } catch {
    return undefined;
  }
}

async function smokeTest(): Promise<string> {
  const inputs = new Float32Array(32 * 4).map((_, i) => Math.sin(i));
  const targets = new Int32Array(32).map((_, i) => i % 2);
  const trainer = new Trainer({
    model: nn.sequential(nn.linear(4, 16), nn.relu(), nn.linear(16, 2)),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-3 },
    config: {
      batchSize: 32,
      maxSteps: 1,
      numEpochs: 1,
      progressBar: false,
      numWorkers: 0,
      handleSignals: false,
      device: 'cpu',
    },
  });
  const started = process.hrtime.bigint();
  const history = await trainer.fit(Dataset.fromArrays({ inputs, inputShape: [32, 4], targets }));
  const milliseconds = Number(process.hrtime.bigint() - started) / 1e6;
  const loss = history.epochs[0].loss;
  if (!Number.isFinite(loss)) throw new Error(`the step's loss is ${loss}`);
  return `ok: one AdamW step of a 4-16-2 MLP on the CPU, loss ${loss.toFixed(4)}, ${milliseconds.toFixed(0)} ms with set-up`;
}

/** The diagnosis when the binary cannot load: what was tried, why it failed, and the fix (exit code 1). */
function cannotLoad(error: Error, write: (text: string) => void): number {
  write(
    `${'firebrand:'.padEnd(13)} ${LIBRARY_VERSION} (Node ${process.version}, ${process.platform}-${process.arch})\n`,
  );
  write(`${'library path:'.padEnd(13)} LD_LIBRARY_PATH=${process.env.LD_LIBRARY_PATH ?? '(not set)'}\n`);
  write(`${'binary:'.padEnd(13)} FAILED to load\n\n${error.message.replace(/^firebrand: /, '')}\n`);
  return 1;
}

export async function runDoctor(write: (text: string) => void): Promise<number> {
  let binary;
  try {
    binary = nativeBinary();
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_FIREBRAND_NATIVE_LOAD') throw error;
    return cannotLoad(error as Error, write);
  }
  // What a trainer with the default config runs with.
  setNumThreads(resolveConfig({}).numThreads);
  const info = native.runtimeInfo();
  const { build } = info;
  const yesNo = (flag: boolean) => (flag ? 'yes' : 'no');
  const lines: [string, string][] = [
    ['firebrand', `${LIBRARY_VERSION} (Node ${process.version}, ${process.platform}-${process.arch})`],
    [
      'binary',
      `${binary.kind} ${binary.file}` +
        (binary.manifest
          ? ` (built against libtorch ${binary.manifest.torchVersion}, ${binary.manifest.libtorchSource})`
          : ''),
    ],
    ...binary.skipped.map((prebuild): [string, string] => [
      'skipped',
      `prebuild for libtorch ${prebuild.manifest?.torchVersion ?? '(unknown)'} ${prebuild.file}: ${prebuild.reason}`,
    ]),
    [
      'libtorch',
      `${build.torchVersion}, found via ${build.libtorchSource} (${build.torchDir}); loaded ${loadedLibtorch() ?? 'from an unknown file'}`,
    ],
    [
      'CUDA',
      info.cudaAvailable
        ? `available, ${info.cudaDeviceCount} device(s); cuDNN ${yesNo(info.cudnnAvailable)}`
        : `not available (${build.cuda ? 'libtorch has CUDA but no GPU is visible' : 'libtorch built without CUDA'})`,
    ],
    ['distributed', `gloo ${yesNo(build.gloo)}, nccl ${yesNo(build.nccl)}`],
    [
      'BLAS',
      `${info.blas.vendor} (${info.blas.library || 'library not found'})${info.blas.coreType ? `, ${info.blas.coreType} kernels` : ''}`,
    ],
    [
      'threads',
      info.threadsAdaptive
        ? `auto: ${info.numThreads} or 1, whichever steps faster while training (libtorch intra-op; config.numThreads fixes them)`
        : `${info.numThreads} (libtorch intra-op; config.numThreads sets them)`,
    ],
    ['optimizers', `fused one-pass steps for float32 CPU parameters: ${info.fusedOptimizers.join(', ') || 'none'}`],
    [
      'frozen linear',
      info.onednnSgemm
        ? "float32 products in training through oneDNN's sgemm"
        : "float32 products through libtorch's BLAS (no oneDNN sgemm found, or FIREBRAND_ONEDNN_SGEMM=0)",
    ],
    [
      'convolutions',
      info.onednnConvolution
        ? "predict's lowered convolutions as oneDNN 3 primitives, made once per input size"
        : "predict's lowered convolutions through libtorch's prepacked op (no oneDNN 3, or FIREBRAND_ONEDNN_CONVOLUTION=0)",
    ],
    [
      'linear layers',
      info.onednnMatmul
        ? "predict's lowered linear layers as oneDNN 3 matmuls, the weight packed once"
        : "predict's lowered linear layers through oneDNN's sgemm or BLAS (no oneDNN 3, or FIREBRAND_ONEDNN_MATMUL=0)",
    ],
  ];
  const warnings: string[] = [];
  if (info.blas.vendor === 'reference') {
    warnings.push('libtorch uses the reference BLAS: training runs about 8x slower; install libopenblas0-openmp');
  }
  let status = 0;
  try {
    lines.push(['smoke test', await smokeTest()]);
  } catch (error) {
    lines.push(['smoke test', `FAILED: ${(error as Error).message}`]);
    status = 1;
  }
  for (const [name, value] of lines) write(`${`${name}:`.padEnd(13)} ${value}\n`);
  for (const warning of warnings) write(`warning: ${warning}\n`);
  return status;
}

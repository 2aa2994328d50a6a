// Part of `npm run bench`: while fit trains the CNN, the event-loop delay of
// the same process (perf_hooks.monitorEventLoopDelay; target p99 < 20 ms);
// and the RSS after 20,000 `tiny` steps against after 2,000 (target: within
// 5%). Prints one JSON line.
import { monitorEventLoopDelay } from 'node:perf_hooks';

import { Dataset, nn, Trainer } from '../../src';
import { demoCnn } from '../fashion-mnist';

function data(samples: number, features: number, shape: number[], classCount?: number): Dataset {
  const inputs = new Float32Array(samples * features).map((_, i) => Math.sin(i * 0.7));
  const targets =
    classCount === undefined
      ? new Float32Array(samples).map((_, i) => Math.cos(i))
      : new Int32Array(samples).map((_, i) => i % classCount);
  return Dataset.fromArrays({
    inputs,
    inputShape: [samples, ...shape],
    targets,
    targetShape: classCount === undefined ? [samples, 1] : undefined,
  });
}

async function eventLoopDelayWhileCnnTrains(): Promise<{ p99Ms: number; maxMs: number; seconds: number }> {
  const trainer = new Trainer({
    model: demoCnn(),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-3 },
    config: { batchSize: 64, numThreads: 1, numEpochs: 1 },
  });
  const train = data(64 * 60, 784, [1, 28, 28], 10);
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const started = performance.now();
  await trainer.fit(train);
  histogram.disable();
  return {
    p99Ms: histogram.percentile(99) / 1e6,
    maxMs: histogram.max / 1e6,
    seconds: (performance.now() - started) / 1000,
  };
}

async function rssGrowthOverTinySteps(): Promise<{ rssAt2000Mb: number; rssAt20000Mb: number; growth: number }> {
  const trainer = new Trainer({
    model: nn.sequential(nn.linear(16, 16), nn.relu(), nn.linear(16, 1)),
    loss: 'mse',
    optimizer: { name: 'sgd', lr: 0.01 },
    config: { batchSize: 32, numThreads: 1, progressBar: false },
  });
  const train = data(32 * 1000, 16, [16]);
  await trainer.fit(train, { numEpochs: 2 });
  const rssAt2000Mb = process.memoryUsage().rss / 2 ** 20;
  await trainer.fit(train, { numEpochs: 18 });
  const rssAt20000Mb = process.memoryUsage().rss / 2 ** 20;
  return { rssAt2000Mb, rssAt20000Mb, growth: rssAt20000Mb / rssAt2000Mb - 1 };
}

async function main(): Promise<void> {
  const eventLoop = await eventLoopDelayWhileCnnTrains();
  const memory = await rssGrowthOverTinySteps();
  console.log(JSON.stringify({ eventLoop, memory }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

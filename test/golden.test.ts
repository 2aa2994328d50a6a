// Replays training runs recorded by PyTorch itself (scripts/make-golden-fixtures.py,
// Debian's python3-torch 1.13; bf16 cases also per version, test/fixtures/torch-<version>/)
// and checks firebrand gets the same numbers.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

import { Dataset, LossSpec, nn, OptimizerSpec, runtimeInfo, SchedulerSpec, Trainer } from '../src';
import { expectClose } from './support/expect-close';

interface GoldenCase {
  title: string;
  seed: number;
  optimizer: OptimizerSpec;
  loss: LossSpec;
  batchSize?: number;
  epochs?: number;
  gradientAccumulationSteps?: number;
  maxGradNorm?: number;
  clipValue?: number;
  lrScheduler?: SchedulerSpec;
  logSoftmax?: boolean;
  mixedPrecision?: 'bf16';
  ema?: { decay: number; warmup?: boolean };
  epochLosses: number[];
  stepLosses: number[];
  gradNorms?: number[];
  predictions: number[];
  finalWeights: Record<string, number[]>;
}

interface GoldenFixture {
  torchVersion: string;
  batchSize: number;
  epochs: number;
  features: number;
  classes: number;
  inputs: number[][];
  labels: number[];
  regressionTargets: number[];
  multiLabelTargets: number[][];
  distributionTargets: number[][];
  cases: GoldenCase[];
}

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures');
const readFixture = (file: string): GoldenFixture => JSON.parse(fs.readFileSync(file, 'utf8')) as GoldenFixture;
const majorMinor = (version: string): string => version.split('.').slice(0, 2).join('.');

const fixture = readFixture(path.join(fixtures, 'golden-training.json'));
// Cases whose numbers depend on the version's kernels (bf16 rounding) are recorded per libtorch
// version (make-golden-fixtures.py --version-dependent); the running version's replace the base's.
const running = majorMinor(runtimeInfo().torchVersion);
const perVersionFile = path.join(fixtures, `torch-${running}`, 'golden-training.json');
const perVersion = fs.existsSync(perVersionFile) ? readFixture(perVersionFile) : undefined;
const versionDependent = (golden: GoldenCase): boolean => golden.mixedPrecision !== undefined;

/** The case as PyTorch of the running libtorch version recorded it, or why there is none. */
function recorded(golden: GoldenCase): GoldenCase | string {
  if (!versionDependent(golden) || majorMinor(fixture.torchVersion) === running) return golden;
  const own = perVersion?.cases.find((candidate) => candidate.title === golden.title);
  return (
    own ??
    `no fixture of '${golden.title}' for libtorch ${running}: run scripts/make-golden-fixtures.py --version-dependent with its python3-torch`
  );
}

describe(`agreement with PyTorch ${fixture.torchVersion} (golden fixtures; version-dependent cases for ${running})`, () => {
  const samples = fixture.inputs.length;
  const inputs = new Float32Array(fixture.inputs.flat());

  for (const base of fixture.cases) {
    it(base.title, async () => {
      const golden = recorded(base);
      if (typeof golden === 'string') throw new Error(golden);
      const perClassTargets: Record<string, number[][] | undefined> = {
        bce_with_logits: fixture.multiLabelTargets,
        kl_div: fixture.distributionTargets,
      };
      const rows =
        perClassTargets[golden.loss.name] ??
        fixture.regressionTargets.map((value) => Array(fixture.classes).fill(value));
      const data =
        golden.loss.name === 'cross_entropy'
          ? Dataset.fromArrays({
              inputs,
              inputShape: [samples, fixture.features],
              targets: new Int32Array(fixture.labels),
            })
          : Dataset.fromArrays({
              inputs,
              inputShape: [samples, fixture.features],
              targets: new Float32Array(rows.flat()),
              targetShape: [samples, fixture.classes],
            });
      const stepLosses: number[] = [];
      const gradNorms: number[] = [];
      const trainer = new Trainer({
        model: nn.sequential(
          nn.linear(fixture.features, 8),
          nn.tanh(),
          nn.linear(8, fixture.classes),
          ...(golden.logSoftmax ? [nn.logSoftmax(1)] : []),
        ),
        loss: golden.loss,
        optimizer: golden.optimizer,
        lrScheduler: golden.lrScheduler,
        config: {
          seed: golden.seed,
          numEpochs: golden.epochs ?? fixture.epochs,
          batchSize: golden.batchSize ?? fixture.batchSize,
          gradientAccumulationSteps: golden.gradientAccumulationSteps,
          maxGradNorm: golden.maxGradNorm,
          clipValue: golden.clipValue,
          mixedPrecision: golden.mixedPrecision,
          ema: golden.ema === undefined ? undefined : { enabled: true, ...golden.ema },
          logEvery: 1,
          shuffle: false,
          progressBar: false,
          numThreads: 1,
        },
        callbacks: [
          {
            onLog: (logs) => {
              stepLosses.push(logs.loss);
              if (logs.gradNorm !== undefined) gradNorms.push(logs.gradNorm);
            },
          },
        ],
      });
      const history = await trainer.fit(data);
      expect(stepLosses).to.have.length(golden.stepLosses.length);
      stepLosses.forEach((loss, index) => expectClose(loss, golden.stepLosses[index], `step ${index + 1} loss`));
      expect(gradNorms).to.have.length(golden.gradNorms?.length ?? 0);
      gradNorms.forEach((norm, index) => expectClose(norm, golden.gradNorms![index], `step ${index + 1} grad norm`));
      history.epochs.forEach((epoch, index) =>
        expectClose(epoch.loss, golden.epochLosses[index], `epoch ${index} loss`),
      );
      const state = await trainer.stateDict();
      expect(Object.keys(state).sort()).to.deep.equal(Object.keys(golden.finalWeights).sort());
      for (const [name, values] of Object.entries(golden.finalWeights)) {
        Array.from(state[name].data as Float32Array).forEach((value, i) =>
          expectClose(value, values[i], `final ${name}[${i}]`),
        );
      }
      const output = await trainer.predict(inputs.slice(0, 4 * fixture.features), [4, fixture.features]);
      Array.from(output.data).forEach((value, index) =>
        expectClose(value, golden.predictions[index], `prediction ${index}`),
      );
    });
  }
});

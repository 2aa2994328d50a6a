// nn.syncBatchNorm and config.distributed.syncBatchNorm on 2 ranks: trained
// with batch statistics over both ranks' batches, the weights and running
// statistics are those of one process with a batch norm over the global
// batch — what torch.nn.SyncBatchNorm computes (PyTorch's own refuses CPU
// tensors, so its definition is the reference here).
import { expect } from 'chai';

import { BlobBatchNormMlp, distributedTrainer, evalData, trainData } from './support/distributed-child';
import { withSyncBatchNorm } from '../src/nn/sync-batch-norm';
import { errorOf, freePort } from './support/helpers';
import { maxAbsDifference, reports, runLaunch } from './support/launch-runs';

async function weightsOf(config: Record<string, unknown>): Promise<Record<string, number[]>> {
  const trainer = distributedTrainer(16, config, [], new BlobBatchNormMlp());
  await trainer.fit(trainData(), { evalData: evalData() });
  return Object.fromEntries(
    Object.entries(await trainer.stateDict()).map(([name, tensor]) => [
      name,
      Array.from(tensor.data as ArrayLike<number | bigint>, Number),
    ]),
  );
}

async function rankWeights(mode: string): Promise<Record<string, number[]>[]> {
  const result = runLaunch(await freePort(), ['--nproc-per-node', '2'], [mode]);
  expect(result.status, result.stderr).to.equal(0);
  const ranks = reports(result.stdout);
  expect(ranks.map((rank) => rank.rank)).to.deep.equal([0, 1]);
  for (const rank of ranks) expect(rank.error, JSON.stringify(rank.error)).to.equal(undefined);
  return ranks.map((rank) => rank.weights ?? {});
}

describe('syncBatchNorm: batch statistics over every rank (2 ranks, Gloo)', function () {
  this.timeout(120_000);
  let single: Record<string, number[]>;
  before(async () => (single = await weightsOf({})));

  it("trains 2 ranks to one process's weights and running statistics on the global batch", async () => {
    const [rank0, rank1] = await rankWeights('train-sync-bn');
    expect(Object.keys(rank0)).to.include.members([
      'norm.running_mean',
      'norm.running_var',
      'norm.num_batches_tracked',
    ]);
    expect(maxAbsDifference(rank0, single)).to.be.at.most(1e-5);
    expect(maxAbsDifference(rank0, rank1)).to.equal(0);
  });

  it('differs without it: each rank then normalizes by its own half of the batch', async () => {
    const [rank0] = await rankWeights('train-unsynced-bn');
    expect(maxAbsDifference(rank0, single)).to.be.above(1e-3);
  });

  it('is a batch norm in one process, where there is nothing to synchronize', async () => {
    expect(maxAbsDifference(await weightsOf({ distributed: { syncBatchNorm: true } }), single)).to.equal(0);
  });

  it('converts batch norm layers only, keeping their options, and refuses a model without nn layers', () => {
    const spec = {
      type: 'graph' as const,
      modules: {
        className: 'Net',
        parameters: [],
        buffers: [],
        children: [
          {
            name: 'bn',
            module: {
              className: 'BatchNorm2d',
              layer: { type: 'batchNorm2d', numFeatures: 3, eps: 0.001 },
              parameters: [],
              buffers: [],
              children: [],
            },
          },
          {
            name: 'ln',
            module: {
              className: 'LayerNorm',
              layer: { type: 'layerNorm', normalizedShape: [3] },
              parameters: [],
              buffers: [],
              children: [],
            },
          },
        ],
      },
      construction: [],
      graph: { inputs: [], nodes: [], outputs: [] },
    };
    const converted = withSyncBatchNorm(spec as never) as unknown as typeof spec;
    expect(converted.modules.children.map(({ module }) => [module.className, module.layer])).to.deep.equal([
      ['SyncBatchNorm', { type: 'syncBatchNorm', numFeatures: 3, eps: 0.001 }],
      ['LayerNorm', { type: 'layerNorm', normalizedShape: [3] }],
    ]);
    expect(spec.modules.children[0].module.layer.type).to.equal('batchNorm2d');
    const error = errorOf(() => withSyncBatchNorm({ type: 'torchscript', path: 'model.pt' } as never));
    expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(error.message).to.match(/distributed\.syncBatchNorm: the layers of a torchscript model cannot be converted/);
  });
});

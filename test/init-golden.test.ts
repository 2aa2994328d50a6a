// Seeded nn.init schemes against PyTorch's own draws (scripts/make-module-fixtures.py writes
// init-schemes.safetensors per libtorch version: trunc_normal_ draws differently from 2.12 on).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

import { loadSafetensors, nn, Parameter, runtimeInfo, Tensor, Trainer } from '../src';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures');
const running = runtimeInfo().torchVersion.split('.').slice(0, 2).join('.');
const perVersion = path.join(fixtures, `torch-${running}`, 'modules', 'init-schemes.safetensors');
const fixture = fs.existsSync(perVersion) ? perVersion : path.join(fixtures, 'modules', 'init-schemes.safetensors');

/** The cases of INIT_CASES, in their order, each a Parameter with its nn.init call. */
class Initialised extends nn.Module {
  uniform = nn.init.uniform_(new Parameter([4, 5]), { a: -0.5, b: 2 });
  normal = nn.init.normal_(new Parameter([4, 5]), { mean: 1, std: 0.3 });
  trunc_normal_default = nn.init.truncNormal_(new Parameter([6, 7]));
  trunc_normal_vit = nn.init.truncNormal_(new Parameter([1, 17, 32]), { std: 0.02 });
  trunc_normal_narrow = nn.init.truncNormal_(new Parameter([64]), { mean: 0, std: 1, a: 1.5, b: 2.5 });
  trunc_normal_shifted = nn.init.truncNormal_(new Parameter([40]), { mean: 1, std: 0.5, a: -0.25, b: 0.5 });
  xavier_uniform = nn.init.xavierUniform_(new Parameter([8, 3]), { gain: 1.5 });
  xavier_normal = nn.init.xavierNormal_(new Parameter([8, 3, 2]));
  kaiming_uniform = nn.init.kaimingUniform_(new Parameter([6, 4, 3, 3]), { a: Math.sqrt(5) });
  kaiming_normal = nn.init.kaimingNormal_(new Parameter([6, 4]), { mode: 'fan_out', nonlinearity: 'relu' });
  orthogonal = nn.init.orthogonal_(new Parameter([5, 3]), { gain: 2 });

  forward(x: Tensor): Tensor {
    return x;
  }
}

describe('nn.init schemes against PyTorch', () => {
  it(`draws what torch.nn.init draws under the same seed (${path.relative(fixtures, fixture)})`, async () => {
    const { tensors: expected, metadata } = await loadSafetensors(fixture);
    const trainer = new Trainer({
      model: new Initialised(),
      loss: 'mse',
      optimizer: 'sgd',
      config: { seed: 0, progressBar: false },
    });
    const actual = await trainer.stateDict();
    expect(Object.keys(actual)).to.deep.equal(JSON.parse(metadata.cases) as string[]);
    for (const [name, tensor] of Object.entries(expected)) {
      expect(actual[name].shape, name).to.deep.equal(tensor.shape);
      const worst = Math.max(
        ...Array.from(tensor.data as Float32Array, (value, i) => Math.abs(value - (actual[name].data[i] as number))),
      );
      expect(worst, `${name}: largest difference from PyTorch ${metadata.torchVersion}`).to.be.at.most(1e-6);
    }
  });
});

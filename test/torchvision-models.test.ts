// torchvision's ResNet and MobileNetV3 checkpoints as torchvision writes them
// (torch.save .pth and .safetensors state dicts of seeded random weights, made
// at test time by test/support/torchvision-checkpoints.py with the python3 of
// the leg: torchvision 0.14 on the host, 0.27 in the sid chroot) load into
// torchvision.models by name and give torchvision's logits.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, Module, nn, torchvision, Trainer } from '../src';
import { expectClose } from './support/expect-close';
import { pythonJson, rejectionOf } from './support/helpers';

interface Reference {
  input: number[];
  inputShape: number[];
  torchvision: string;
  [model: string]: { logits: number[]; files: string[] } | number[] | string;
}

const script = fs.readFileSync(
  path.join(__dirname, '..', '..', 'test', 'support', 'torchvision-checkpoints.py'),
  'utf8',
);
const constructors = {
  resnet18: torchvision.models.resnet18,
  resnet50: torchvision.models.resnet50,
  mobilenet_v3_large: torchvision.models.mobilenetV3Large,
  mobilenet_v3_small: torchvision.models.mobilenetV3Small,
};

const trainerOf = (model: Module) =>
  new Trainer({
    model,
    loss: 'cross_entropy',
    optimizer: 'sgd',
    config: { progressBar: false, numThreads: 1, seed: 0, batchSize: 2, numEpochs: 1 },
  });

describe('torchvision.models: torchvision checkpoints, against torchvision', function () {
  this.timeout(600_000);
  let folder: string;
  let reference: Reference;
  before(function () {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-torchvision-'));
    const withTorchvision = `try:\n    import torchvision\nexcept ImportError as error:\n    import json; print(json.dumps({"missing": str(error)})); raise SystemExit\n${script}`;
    const result = pythonJson(this, withTorchvision, folder) as Reference & { missing?: string };
    if (result.missing !== undefined) {
      console.log(`      skipped: python3 has no torchvision (${result.missing}); apt-get install python3-torchvision`);
      this.skip();
    }
    reference = result;
  });
  after(() => fs.rmSync(folder, { recursive: true, force: true }));

  const input = () => ({ data: Float32Array.from(reference.input), shape: reference.inputShape });

  for (const [name, make] of Object.entries(constructors)) {
    it(`${name}: loads torch.save .pth (and .safetensors where python has safetensors) to torchvision's logits`, async () => {
      const { logits, files } = reference[name] as { logits: number[]; files: string[] };
      if (files.length === 1) console.log(`      (python3 has no safetensors: ${name}.pth only)`);
      for (const file of files) {
        const trainer = trainerOf(make({ numClasses: 10, weights: file }));
        const { data, shape } = input();
        expectClose(
          await trainer.predict(data, shape),
          logits,
          `${path.basename(file)} logits (torchvision ${reference.torchvision})`,
        );
      }
    });
  }

  it('keeps a head replaced after loading (model.fc) out of the file, and trains it', async () => {
    const model = torchvision.models.resnet18({ numClasses: 10, weights: path.join(folder, 'resnet18.pth') });
    const loaded = await trainerOf(
      torchvision.models.resnet18({ numClasses: 10, weights: path.join(folder, 'resnet18.pth') }),
    ).stateDict();
    model.fc = nn.linear(512, 3);
    const trainer = trainerOf(model);
    const state = await trainer.stateDict();
    expect(state['fc.weight'].shape).to.deep.equal([3, 512]);
    expect(state['conv1.weight'].data).to.deep.equal(loaded['conv1.weight'].data);
    const { data, shape } = input();
    const history = await trainer.fit(
      Dataset.fromFields({ input: { data, shape }, target: { data: new Int32Array([0, 2]), shape: [2] } }),
    );
    expect(history.epochs[0].loss).to.be.a('number');
  });

  it('refuses a pickle that holds more than tensors (a whole model, a command), naming the global, and reads a nested checkpoint by map', async () => {
    const whole = await rejectionOf(
      trainerOf(
        torchvision.models.mobilenetV3Small({ numClasses: 10, weights: path.join(folder, 'whole-model.pt') }),
      ).setup(),
    );
    expect(whole.code).to.equal('ERR_FIREBRAND_FILE');
    expect(whole.message).to.match(/refers to torchvision\.models\.mobilenetv3\.MobileNetV3, which is not a tensor/);
    const malicious = await rejectionOf(
      trainerOf(
        torchvision.models.mobilenetV3Small({ numClasses: 10, weights: path.join(folder, 'malicious.pt') }),
      ).setup(),
    );
    expect(malicious.code).to.equal('ERR_FIREBRAND_FILE');
    expect(malicious.message).to.match(/refers to (posix|os)\.system, which is not a tensor/);
    expect(fs.existsSync(path.join(folder, 'pwned')), 'the command did not run').to.equal(false);
    const trainer = trainerOf(torchvision.models.mobilenetV3Small({ numClasses: 10 }));
    const report = await trainer.initWeightsFrom(path.join(folder, 'checkpoint.pt'), { map: { 'model.': '' } });
    expect(report).to.deep.equal({ missing: [], unexpected: [] });
  });
});

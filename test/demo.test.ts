// The README's first command, `npm run demo`, run as a user runs it (the real
// script through npm), shortened by its environment variables to one epoch on
// a subset: it must train and print a test accuracy.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '..', '..');
const dataDir = process.env.FASHION_MNIST_DIR ?? '/usr/share/datasets/fashion-mnist';

describe('npm run demo', () => {
  it('trains the README CNN on a Fashion-MNIST subset and prints the test accuracy', function () {
    if (!fs.existsSync(path.join(dataDir, 'train-images-idx3-ubyte.gz'))) {
      console.log(`      skipped: Fashion-MNIST is not in ${dataDir} (apt-get install dataset-fashion-mnist)`);
      this.skip();
    }
    const result = spawnSync('npm', ['run', 'demo'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, DEMO_EPOCHS: '1', DEMO_TRAIN_SAMPLES: '3000', DEMO_TEST_SAMPLES: '1000' },
    });
    expect(result.status, `${result.stdout}\n${result.stderr}`).to.equal(0);
    expect(result.stdout).to.match(
      /firebrand demo: Fashion-MNIST, 3000 training \/ 1000 test images, 421642 parameters/,
    );
    const accuracy = Number(/test accuracy (\d\.\d{4})/.exec(result.stdout)?.[1]);
    // One epoch on 3,000 images: well past chance (0.1).
    expect(accuracy, result.stdout).to.be.above(0.5);
  });
});

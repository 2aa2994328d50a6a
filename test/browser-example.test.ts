// examples/browser: the exported Fashion-MNIST model served from a loopback
// server, run by onnxruntime-web in Debian's headless Chromium; its logits
// must be predict's for the pixels the page read.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { servePage, trainAndExport } from '../examples/browser/serve';
import { expectClose } from './support/expect-close';
import { chromium, loadPage } from './support/headless-chromium';

const dataDir = process.env.FASHION_MNIST_DIR ?? '/usr/share/datasets/fashion-mnist';

describe('examples/browser: onnxruntime-web in headless Chromium', function () {
  this.timeout(600_000);

  it("classifies the sample image as firebrand's predict does on the same pixels", async function () {
    if (chromium === undefined) {
      console.log('      skipped: no Chromium (apt-get install chromium)');
      this.skip();
    }
    if (!fs.existsSync(path.join(dataDir, 'train-images-idx3-ubyte.gz'))) {
      console.log(`      skipped: no Fashion-MNIST in ${dataDir} (apt-get install dataset-fashion-mnist)`);
      this.skip();
    }
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-browser-test-'));
    const trainer = await trainAndExport(folder, dataDir, 1, 3000);
    const server = await servePage(folder);
    try {
      const screenshot = process.env.FIREBRAND_SCREENSHOT ?? path.join(folder, 'page.png');
      const run = await loadPage(`${server.url}?image=sample.png`, folder, [
        '--window-size=900,560',
        `--screenshot=${screenshot}`,
      ]);
      const json = /<pre id="result"[^>]*>([^<]*)<\/pre>/.exec(run.stdout)?.[1];
      expect(json, `Chromium printed no result (status ${run.status}): ${run.stderr.slice(-2000)}`).to.be.a('string');
      const result = JSON.parse((json as string).replace(/&amp;/g, '&')) as {
        pixels?: number[];
        logits?: number[];
        error?: string;
      };
      expect(result.error).to.equal(undefined);
      const pixels = Uint8Array.from(result.pixels as number[]);
      expect(pixels.length).to.equal(784);
      const expected = await trainer.predict(pixels, [1, 1, 28, 28]);
      expectClose(result.logits as number[], expected.data, 'browser logits', { tolerance: 1e-5 });
      expect(fs.readFileSync(screenshot).subarray(1, 4).toString()).to.equal('PNG');
    } finally {
      await server.close();
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});

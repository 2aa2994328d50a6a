// A lowered predict adds a residual inside the convolution before the sum (oneDNN's binary post-op, then the
// ReLU after the sum), as onnxruntime fuses Conv+Add+Relu: the same outputs as the network run as written.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { runtimeInfo } from '../src';
import { expectClose } from './support/expect-close';

const NAMES = ['ResNet block', 'MobileNetV3 block', 'broadcast residual', 'convolution read twice'];

function child(): { lines: string[]; outputs: Record<string, number[][]> } {
  const run = spawnSync(process.execPath, [path.join(__dirname, 'support', 'residual-child.js')], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, ONEDNN_VERBOSE: '1', DNNL_VERBOSE: '1' },
  });
  if (run.status !== 0) throw new Error(run.stderr);
  const lines = run.stdout.split('\n');
  return { lines, outputs: JSON.parse(lines.find((line) => line.startsWith('{'))!) };
}

describe("predict's inference lowering: residual sums inside the convolution before them", function () {
  this.timeout(60_000);
  let ran: ReturnType<typeof child>;
  before(() => {
    ran = child();
  });

  it('gives the outputs of the network run as written, at two batch sizes', () => {
    for (const batch of [2, 3]) {
      for (const [index, name] of NAMES.entries()) {
        const [lowered, written] = [ran.outputs[`${batch} lowered`][index], ran.outputs[`${batch} as written`][index]];
        expect(lowered, name).to.have.length(written.length);
        expectClose(lowered, written, `${name}, batch ${batch}`);
      }
    }
    expect(Math.max(...ran.outputs['3 lowered'][0].map(Math.abs))).to.be.greaterThan(1e-3);
  });

  it("adds the residual as oneDNN's post-op where libtorch links oneDNN 3: the ResNet and MobileNetV3 sums", function () {
    if (!runtimeInfo().onednnConvolution) {
      console.log('      skipped: this libtorch links no oneDNN 3 (the sums run as written after the convolution)');
      this.skip();
    }
    const inference = ran.lines.filter((line) => /exec,cpu,convolution,.*forward_inference/.test(line));
    // 7 convolutions in each of the 2 lowered calls; of each call's, the ResNet block's second adds the
    // downsampling branch and then its ReLU, the MobileNetV3 projection adds the block's input.
    expect(inference).to.have.length(14);
    const withSum = inference.filter((line) => line.includes('binary_add'));
    expect(withSum).to.have.length(4);
    expect(withSum.filter((line) => /binary_add.*eltwise_relu/.test(line))).to.have.length(2);
  });
});

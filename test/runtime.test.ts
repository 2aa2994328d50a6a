// Runtime facts (libtorch version, BLAS) and failures that must not crash Node.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { nn, runtimeInfo, setNumThreads, Trainer } from '../src';
import { setupError } from './support/helpers';

const referenceBlasDir = '/usr/lib/x86_64-linux-gnu/blas';

describe('runtime', () => {
  it('reports the libtorch version, threads and the BLAS library in use', () => {
    const info = runtimeInfo();
    expect(info.torchVersion).to.match(/^\d+\.\d+\.\d+/);
    expect(info.numThreads).to.be.at.least(1);
    expect(info.cudaDeviceCount).to.be.at.least(0);
    expect(['openblas', 'mkl', 'blis', 'atlas', 'reference', 'unknown']).to.include(info.blas.vendor);
  });

  it('reports the threads training uses: a fixed count, or auto with its most', () => {
    setNumThreads(3);
    expect(runtimeInfo()).to.include({ numThreads: 3, threadsAdaptive: false });
    setNumThreads('auto');
    expect(runtimeInfo()).to.include({ numThreads: os.availableParallelism(), threadsAdaptive: true });
    setNumThreads(1);
    expect(runtimeInfo()).to.include({ numThreads: 1, threadsAdaptive: false });
  });

  it('detects the reference BLAS and warns once that training will be slow', function () {
    if (!fs.existsSync(path.join(referenceBlasDir, 'libblas.so.3'))) {
      console.log(`      skipped: no reference BLAS in ${referenceBlasDir} to load (apt-get install libblas3)`);
      this.skip();
    }
    const script = `
      const { nn, runtimeInfo, Trainer } = require(${JSON.stringify(path.join(__dirname, '..', 'src'))});
      const make = () => new Trainer({ model: nn.sequential(nn.linear(2, 1)), loss: 'mse', optimizer: 'sgd', config: { progressBar: false } });
      (async () => {
        await make().setup();
        await make().setup();
        console.log(runtimeInfo().blas.vendor);
      })();`;
    // The dynamic loader takes libblas.so.3 from LD_LIBRARY_PATH before the system's choice.
    const child = spawnSync(process.execPath, ['-e', script], {
      env: { ...process.env, LD_LIBRARY_PATH: referenceBlasDir },
      encoding: 'utf8',
    });
    expect(child.status, child.stderr).to.equal(0);
    expect(child.stdout.trim()).to.equal('reference');
    expect(child.stderr.match(/FIREBRAND_REFERENCE_BLAS/g)).to.have.length(1);
    expect(child.stderr).to.contain('training steps run about 8x slower');
  });

  it('names the kernels OpenBLAS chose, as OPENBLAS_CORETYPE sets them', function () {
    const script = `console.log(JSON.stringify(require(${JSON.stringify(path.join(__dirname, '..', 'src'))}).runtimeInfo().blas))`;
    const blasOf = (coreType: string) => {
      const env = { ...process.env, OPENBLAS_CORETYPE: coreType };
      const child = spawnSync(process.execPath, ['-e', script], { env, encoding: 'utf8' });
      expect(child.status, child.stderr).to.equal(0);
      return JSON.parse(child.stdout) as { vendor: string; coreType: string };
    };
    const blas = blasOf('HASWELL');
    if (blas.vendor !== 'openblas') {
      expect(blas.coreType).to.equal('');
      console.log(`      skipped: libtorch calls ${blas.vendor}, not OpenBLAS`);
      this.skip();
    }
    expect(blas.coreType).to.equal('Haswell');
    // OpenBLAS's own choice for this CPU when the setting names no kernels it has.
    expect(blasOf('no such kernels').coreType).to.be.a('string').and.not.equal('');
  });

  it('names a kernel setting it does not take (FIREBRAND_CPU_BASELINE=avx512), once, and runs the default', () => {
    const script = `const f = require(${JSON.stringify(path.join(__dirname, '..', 'src'))}); f.runtimeInfo(); f.runtimeInfo(); console.log('ran')`;
    const child = spawnSync(process.execPath, ['-e', script], {
      env: { ...process.env, FIREBRAND_CPU_BASELINE: 'avx512', FIREBRAND_DECODE_KERNELS: '1' },
      encoding: 'utf8',
    });
    expect(child.status, child.stderr).to.equal(0);
    expect(child.stdout.trim()).to.equal('ran');
    expect(child.stderr.match(/FIREBRAND_UNKNOWN_SETTING/g)).to.have.length(1);
    expect(child.stderr).to.contain('FIREBRAND_CPU_BASELINE="avx512" is not one of 0, 1, avx2');
  });

  it('turns a failed allocation into an error naming the layer, not a crash', async () => {
    const error = await setupError(
      () =>
        new Trainer({
          model: nn.sequential(nn.linear(200000, 200000)),
          loss: 'mse',
          optimizer: 'sgd',
          config: { progressBar: false },
        }),
    );
    expect(error?.code).to.equal('ERR_FIREBRAND_OUT_OF_MEMORY');
    expect(error?.message).to.match(
      /^layers\[0\] \(linear\): .*can't allocate memory: you tried to allocate 160000000000 bytes/,
    );
  });
});

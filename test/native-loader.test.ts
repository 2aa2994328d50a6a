// Loading the native binary: a prebuild that needs a libtorch this machine
// lacks, or no binary at all, is an error that says what to do.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { loadNativeBinding, PREBUILD_MANIFEST } from '../src/native-loader';

function loadError(root: string): Error & { code?: string } {
  try {
    loadNativeBinding(root);
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected the load to fail');
}

describe('loading the native binary', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-loader-'));
    fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'firebrand-loader-test' }));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('names the libtorch a prebuild needs, the one it was built against, and how to get it', () => {
    // A stand-in prebuild linked against a libtorch_cpu.so.9.9 that is then removed.
    const prebuilds = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`);
    fs.mkdirSync(prebuilds, { recursive: true });
    const source = path.join(root, 'stub.c');
    fs.writeFileSync(source, 'int firebrand_stub(void) { return 0; }\n');
    const library = path.join(root, 'libtorch_cpu.so.9.9');
    execFileSync('g++', ['-x', 'c', '-shared', '-fPIC', '-Wl,-soname,libtorch_cpu.so.9.9', '-o', library, source]);
    execFileSync('g++', ['-shared', '-fPIC', '-Wl,--no-as-needed', '-o', path.join(prebuilds, 'firebrand.napi.node'), '-x', 'c', source, '-x', 'none', library]);
    fs.rmSync(library);
    fs.writeFileSync(path.join(prebuilds, PREBUILD_MANIFEST), JSON.stringify({ torchVersion: '9.9.0', libtorchSource: 'the system libtorch', cuda: false }));
    const error = loadError(root);
    expect(error.code).to.equal('ERR_FIREBRAND_NATIVE_LOAD');
    expect(error.message).to.contain('cannot load its prebuild');
    expect(error.message).to.contain('it needs libtorch_cpu.so.9.9, which is not installed or not on the library path');
    expect(error.message).to.contain('It was built against libtorch 9.9.0 (the system libtorch)');
    expect(error.message).to.contain('setup-debian.sh');
    expect(error.message).to.contain('FIREBRAND_BUILD_FROM_SOURCE=1 npm rebuild firebrand');
  });

  it('says how to build one when there is no binary at all', () => {
    const error = loadError(root);
    expect(error.code).to.equal('ERR_FIREBRAND_NATIVE_LOAD');
    expect(error.message).to.match(new RegExp(`no native binary for ${process.platform}-${process.arch}`));
    expect(error.message).to.contain('npm rebuild firebrand');
  });
});

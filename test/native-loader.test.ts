// Loading the native binary: of a package's prebuilds (one per libtorch) the
// one that loads here is picked, newest libtorch first, and the others are
// named with the reason; a prebuild that needs a libtorch this machine lacks,
// or no binary at all, is an error that says what to do.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { loadNativeBinding, PREBUILD_BINARY, PREBUILD_MANIFEST } from '../src/native-loader';
import { writeUnloadablePrebuild } from './support/helpers';

const repo = path.resolve(__dirname, '..', '..');

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
  let prebuilds: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-loader-'));
    fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'firebrand-loader-test' }));
    prebuilds = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  function manifestIn(folder: string, torchVersion: string): void {
    fs.writeFileSync(
      path.join(folder, PREBUILD_MANIFEST),
      JSON.stringify({ torchVersion, libtorchSource: 'the system libtorch', cuda: false }),
    );
  }

  function unloadablePrebuild(torchVersion: string): string {
    return writeUnloadablePrebuild(path.join(prebuilds, `libtorch-${torchVersion}`), torchVersion);
  }

  /** A stand-in prebuild for libtorch `torchVersion` that loads: a Node-API module exporting { torchVersion }. */
  function loadablePrebuild(torchVersion: string, file = PREBUILD_BINARY): void {
    const folder = path.join(prebuilds, `libtorch-${torchVersion}`);
    fs.mkdirSync(folder, { recursive: true });
    const source = path.join(root, 'module.c');
    fs.writeFileSync(
      source,
      `#include <node_api.h>
NAPI_MODULE_INIT() {
  napi_value version;
  napi_create_string_utf8(env, "${torchVersion}", NAPI_AUTO_LENGTH, &version);
  napi_set_named_property(env, exports, "torchVersion", version);
  return exports;
}
`,
    );
    const headers = path.join(repo, 'node_modules', 'node-api-headers', 'include');
    execFileSync('g++', ['-x', 'c', '-shared', '-fPIC', `-I${headers}`, '-o', path.join(folder, file), source]);
    manifestIn(folder, torchVersion);
  }

  it("takes the file whose tags fit within a libtorch's folder, as node-gyp-build matches prebuilds (libc, napi)", () => {
    loadablePrebuild('2.14', 'firebrand.napi.glibc.node');
    // A musl build beside it would not load on glibc: node-gyp-build's tags leave it out.
    fs.writeFileSync(path.join(prebuilds, 'libtorch-2.14', 'firebrand.napi.musl.node'), 'not a library');
    const loaded = loadNativeBinding<{ torchVersion: string }>(root);
    expect(loaded.file).to.equal(path.join(prebuilds, 'libtorch-2.14', 'firebrand.napi.glibc.node'));
    expect(loaded.skipped).to.deep.equal([]);
  });

  it('picks the prebuild whose libtorch is here, newest first, and names the ones skipped with the reason', () => {
    const missing = unloadablePrebuild('9.9');
    loadablePrebuild('2.14');
    loadablePrebuild('1.13');
    const loaded = loadNativeBinding<{ torchVersion: string }>(root);
    expect(loaded.kind).to.equal('prebuild');
    expect(loaded.binding.torchVersion).to.equal('2.14');
    expect(loaded.file).to.equal(path.join(prebuilds, 'libtorch-2.14', PREBUILD_BINARY));
    expect(loaded.manifest?.torchVersion).to.equal('2.14');
    expect(loaded.skipped).to.have.length(1);
    expect(loaded.skipped[0].manifest?.torchVersion).to.equal('9.9');
    expect(loaded.skipped[0].reason).to.contain(
      `it needs ${missing}, which is not installed or not on the library path`,
    );
  });

  it('prefers a local build to any prebuild', () => {
    loadablePrebuild('2.14');
    fs.mkdirSync(path.join(root, 'build', 'Release'), { recursive: true });
    fs.copyFileSync(
      path.join(prebuilds, 'libtorch-2.14', PREBUILD_BINARY),
      path.join(root, 'build', 'Release', 'firebrand.node'),
    );
    const loaded = loadNativeBinding(root);
    expect(loaded.kind).to.equal('local build');
    expect(loaded.file).to.equal(path.join(root, 'build', 'Release', 'firebrand.node'));
  });

  it('names the libtorch a prebuild needs, the one it was built against, and how to get it', () => {
    const missing = unloadablePrebuild('9.9');
    const error = loadError(root);
    expect(error.code).to.equal('ERR_FIREBRAND_NATIVE_LOAD');
    expect(error.message).to.contain('cannot load its prebuild');
    expect(error.message).to.contain(`it needs ${missing}, which is not installed or not on the library path`);
    expect(error.message).to.contain('It was built against libtorch 9.9 (the system libtorch)');
    expect(error.message).to.contain('setup-debian.sh');
    expect(error.message).to.contain('FIREBRAND_BUILD_FROM_SOURCE=1 npm rebuild firebrand');
  });

  it('lists every prebuild and why it does not load when none does', () => {
    unloadablePrebuild('9.9');
    unloadablePrebuild('8.1');
    const error = loadError(root);
    expect(error.code).to.equal('ERR_FIREBRAND_NATIVE_LOAD');
    expect(error.message).to.contain('none of its 2 prebuilds loads here');
    // Newest first.
    expect(error.message).to.match(
      /libtorch-9\.9[\s\S]*libtorch_cpu\.so\.9\.9[\s\S]*libtorch-8\.1[\s\S]*libtorch_cpu\.so\.8\.1/,
    );
  });

  it('says how to build one when there is no binary at all', () => {
    const error = loadError(root);
    expect(error.code).to.equal('ERR_FIREBRAND_NATIVE_LOAD');
    expect(error.message).to.match(new RegExp(`no native binary for ${process.platform}-${process.arch}`));
    expect(error.message).to.contain('npm rebuild firebrand');
  });
});

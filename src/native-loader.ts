// Finds and loads firebrand's native binary (through node-gyp-build: a local
// build in build/Release, else the prebuild for this platform in prebuilds/),
// and turns the loader's failures into errors that say what to do: a binary
// that needs a libtorch this machine lacks never ends in a raw dlopen message.
import fs from 'node:fs';
import path from 'node:path';

import { firebrandError } from './errors';

/** What prebuilds/<platform>-<arch>/firebrand.libtorch.json records of the libtorch a prebuild was built against. */
export interface PrebuildManifest {
  torchVersion: string;
  libtorchSource: string;
  cuda: boolean;
}

export const PREBUILD_MANIFEST = 'firebrand.libtorch.json';

export interface LoadedBinary<Binding> {
  binding: Binding;
  /** The .node file loaded. */
  file: string;
  kind: 'prebuild' | 'local build';
  /** For a prebuild: the libtorch it was built against. */
  manifest?: PrebuildManifest;
}

const HOW_TO_GET_LIBTORCH =
  '  - Debian/Ubuntu, as root: bash node_modules/firebrand/scripts/setup-debian.sh (libtorch-dev 1.13)\n' +
  '  - any Linux: unpack a LibTorch zip from pytorch.org and set LIBTORCH=/path/to/libtorch, or pip install torch\n' +
  '    then build against it: FIREBRAND_BUILD_FROM_SOURCE=1 npm rebuild firebrand';

function readManifest(file: string): PrebuildManifest | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(path.dirname(file), PREBUILD_MANIFEST), 'utf8')) as PrebuildManifest;
  } catch {
    return undefined;
  }
}

function builtAgainst(manifest: PrebuildManifest | undefined): string {
  return manifest === undefined ? '' : ` It was built against libtorch ${manifest.torchVersion} (${manifest.libtorchSource}).`;
}

/** Loads the binary of the package at `packageRoot`, or throws an ERR_FIREBRAND_NATIVE_LOAD error saying how to fix it. */
export function loadNativeBinding<Binding>(packageRoot: string): LoadedBinary<Binding> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const nodeGypBuild = require('node-gyp-build') as { resolve(dir: string): string };
  let file: string;
  try {
    file = nodeGypBuild.resolve(packageRoot);
  } catch (error) {
    throw firebrandError(
      'ERR_FIREBRAND_NATIVE_LOAD',
      `firebrand: no native binary for ${process.platform}-${process.arch} (no prebuild fits and none was built in ${packageRoot}). ` +
        `Build one with: npm rebuild firebrand. It needs libtorch:\n${HOW_TO_GET_LIBTORCH}\n(${(error as Error).message.trim()})`,
    );
  }
  const kind = file.includes(`${path.sep}prebuilds${path.sep}`) ? 'prebuild' : 'local build';
  const manifest = kind === 'prebuild' ? readManifest(file) : undefined;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return { binding: require(file) as Binding, file, kind, manifest };
  } catch (error) {
    const message = (error as Error).message;
    const missing = /(lib[\w.+-]*\.so[\w.]*): cannot open shared object file/.exec(message);
    const missingTorch = missing !== null && /^lib(torch|c10|gloo)/.test(missing[1]);
    const undefinedSymbol = /undefined symbol: (\S+)/.exec(message);
    let cause: string;
    if (missingTorch) {
      cause = `it needs ${missing[1]}, which is not installed or not on the library path.${builtAgainst(manifest)}`;
    } else if (undefinedSymbol !== null) {
      cause = `the libtorch found is not the one it was built against (undefined symbol ${undefinedSymbol[1]}).${builtAgainst(manifest)}`;
    } else {
      cause = `${message.trim().replace(/\.$/, '')}.${builtAgainst(manifest)}`;
    }
    throw firebrandError('ERR_FIREBRAND_NATIVE_LOAD', `firebrand: cannot load its ${kind} ${file}: ${cause}\nTo fix it:\n${HOW_TO_GET_LIBTORCH}`);
  }
}

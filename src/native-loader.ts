// Finds and loads firebrand's native binary: a local build (build/Release,
// what `npm rebuild` or a source install made) first, else the package's
// prebuild for the libtorch this machine has. A package may hold one prebuild
// per libtorch (prebuilds/<platform>-<arch>/libtorch-<major>.<minor>/); each is
// linked against its libtorch's versioned libraries (libtorch_cpu.so.2.14), so
// only the matching one loads, and they are tried newest first. node-gyp-build
// resolves both, as in any addon: the local build (its build/Release then
// build/Debug preference, FIREBRAND_PREBUILD, PREBUILDS_ONLY), and within each
// libtorch's folder the file whose tags fit (napi, glibc or musl). Failures
// become errors that say what to do: never a raw dlopen message.
import fs from 'node:fs';
import path from 'node:path';

import nodeGypBuild from 'node-gyp-build';

import { firebrandError } from './errors';

/** What prebuilds/<platform>-<arch>/libtorch-<version>/firebrand.libtorch.json records of the libtorch a prebuild was built against. */
export interface PrebuildManifest {
  torchVersion: string;
  libtorchSource: string;
  cuda: boolean;
}

export const PREBUILD_MANIFEST = 'firebrand.libtorch.json';
export const PREBUILD_BINARY = 'firebrand.napi.node';

/** A prebuild that was tried and did not load here, and why. */
export interface SkippedPrebuild {
  file: string;
  manifest?: PrebuildManifest;
  reason: string;
}

export interface LoadedBinary<Binding> {
  binding: Binding;
  /** The .node file loaded. */
  file: string;
  kind: 'prebuild' | 'local build';
  /** For a prebuild: the libtorch it was built against. */
  manifest?: PrebuildManifest;
  /** The package's prebuilds for other libtorch versions, tried before this one and not loadable here. */
  skipped: SkippedPrebuild[];
}

const HOW_TO_GET_LIBTORCH =
  '  - Debian/Ubuntu, as root: bash node_modules/firebrand/scripts/setup-debian.sh (libtorch-dev)\n' +
  '  - any Linux: unpack a LibTorch zip from pytorch.org and set LIBTORCH=/path/to/libtorch, or pip install torch\n' +
  '    then build against it: FIREBRAND_BUILD_FROM_SOURCE=1 npm rebuild firebrand';

/** The folder holding this platform's prebuilds. */
export function prebuildsFolder(packageRoot: string): string {
  return path.join(packageRoot, 'prebuilds', `${process.platform}-${process.arch}`);
}

function readManifest(folder: string): PrebuildManifest | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(folder, PREBUILD_MANIFEST), 'utf8')) as PrebuildManifest;
  } catch {
    return undefined;
  }
}

/** Numeric version parts for ordering newest first; unparsable versions go last. */
function versionKey(manifest: PrebuildManifest | undefined): number[] {
  return (manifest?.torchVersion ?? '').split('.').map((part) => Number.parseInt(part, 10) || 0);
}

function newerFirst(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const difference = (b[i] ?? 0) - (a[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** The binary in one libtorch's folder whose tags fit this Node (node-gyp-build's matching), if any. */
function binaryIn(folder: string): string | undefined {
  const tagged = fs.readdirSync(folder).map((file) => nodeGypBuild.parseTags(file));
  const fitting = tagged
    .filter(nodeGypBuild.matchTags('node', process.versions.modules))
    .sort(nodeGypBuild.compareTags('node'));
  return fitting[0] === undefined ? undefined : path.join(folder, fitting[0].file);
}

/** The package's prebuilds for this platform, newest libtorch first. */
export function listPrebuilds(packageRoot: string): { file: string; manifest?: PrebuildManifest }[] {
  const folder = prebuildsFolder(packageRoot);
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(folder, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => ({
      file: binaryIn(path.join(folder, entry.name)),
      manifest: readManifest(path.join(folder, entry.name)),
    }))
    .filter(
      (prebuild): prebuild is { file: string; manifest: PrebuildManifest | undefined } => prebuild.file !== undefined,
    )
    .sort((a, b) => newerFirst(versionKey(a.manifest), versionKey(b.manifest)));
}

/**
 * A local build, as node-gyp-build resolves one: build/Release, then build/Debug (or FIREBRAND_PREBUILD).
 * The package's own prebuilds sit one folder deeper (per libtorch), where its flat lookup finds none.
 */
function localBuild(packageRoot: string): string | undefined {
  try {
    return nodeGypBuild.resolve(packageRoot);
  } catch {
    return undefined;
  }
}

function builtAgainst(manifest: PrebuildManifest | undefined): string {
  return manifest === undefined
    ? ''
    : ` It was built against libtorch ${manifest.torchVersion} (${manifest.libtorchSource}).`;
}

/** Why dlopen refused a binary, in words a user can act on. */
function loadFailureCause(error: Error, manifest: PrebuildManifest | undefined): string {
  const message = error.message;
  const missing = /(lib[\w.+-]*\.so[\w.]*): cannot open shared object file/.exec(message);
  const undefinedSymbol = /undefined symbol: (\S+)/.exec(message);
  if (missing !== null && /^lib(torch|c10|gloo)/.test(missing[1])) {
    return `it needs ${missing[1]}, which is not installed or not on the library path.${builtAgainst(manifest)}`;
  }
  if (undefinedSymbol !== null) {
    return `the libtorch found is not the one it was built against (undefined symbol ${undefinedSymbol[1]}).${builtAgainst(manifest)}`;
  }
  return `${message.trim().replace(/\.$/, '')}.${builtAgainst(manifest)}`;
}

function requireBinary<Binding>(file: string): Binding {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(file) as Binding;
}

/** Loads the binary of the package at `packageRoot`, or throws an ERR_FIREBRAND_NATIVE_LOAD error saying how to fix it. */
export function loadNativeBinding<Binding>(packageRoot: string): LoadedBinary<Binding> {
  const local = localBuild(packageRoot);
  if (local !== undefined) {
    try {
      return { binding: requireBinary<Binding>(local), file: local, kind: 'local build', skipped: [] };
    } catch (error) {
      throw firebrandError(
        'ERR_FIREBRAND_NATIVE_LOAD',
        `firebrand: cannot load its local build ${local}: ${loadFailureCause(error as Error, undefined)}\nTo fix it:\n${HOW_TO_GET_LIBTORCH}`,
      );
    }
  }
  const prebuilds = listPrebuilds(packageRoot);
  const skipped: SkippedPrebuild[] = [];
  for (const { file, manifest } of prebuilds) {
    try {
      return { binding: requireBinary<Binding>(file), file, kind: 'prebuild', manifest, skipped };
    } catch (error) {
      skipped.push({ file, manifest, reason: loadFailureCause(error as Error, manifest) });
    }
  }
  if (skipped.length === 1) {
    throw firebrandError(
      'ERR_FIREBRAND_NATIVE_LOAD',
      `firebrand: cannot load its prebuild ${skipped[0].file}: ${skipped[0].reason}\nTo fix it:\n${HOW_TO_GET_LIBTORCH}`,
    );
  }
  if (skipped.length > 1) {
    const tried = skipped.map((prebuild) => `  - ${prebuild.file}: ${prebuild.reason}`).join('\n');
    throw firebrandError(
      'ERR_FIREBRAND_NATIVE_LOAD',
      `firebrand: none of its ${skipped.length} prebuilds loads here:\n${tried}\nTo fix it:\n${HOW_TO_GET_LIBTORCH}`,
    );
  }
  throw firebrandError(
    'ERR_FIREBRAND_NATIVE_LOAD',
    `firebrand: no native binary for ${process.platform}-${process.arch} (no prebuild in ${prebuildsFolder(packageRoot)} and none was built in ${packageRoot}).\n` +
      `To fix it, build one (npm rebuild firebrand); it needs libtorch:\n${HOW_TO_GET_LIBTORCH}`,
  );
}

#!/usr/bin/env node
// npm run build:prebuild: makes
// prebuilds/<platform>-<arch>/libtorch-<major>.<minor>/firebrand.napi.node with
// prebuildify (Node-API, stripped) from a cmake-js build against the libtorch
// found, and records that libtorch next to it (firebrand.libtorch.json) so
// that the loader and `firebrand doctor` can name it. Run it once per libtorch
// (scripts/ci-libtorch-latest.sh runs it for sid's) to ship several.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const platform = `${process.platform}-${process.arch}`;
// prebuildify works in a staging folder: it moves the build it strips.
const staging = path.join(root, 'build', 'prebuild-staging');
fs.rmSync(staging, { recursive: true, force: true });
fs.mkdirSync(staging, { recursive: true });
fs.copyFileSync(path.join(root, 'package.json'), path.join(staging, 'package.json'));
const prebuildify = require.resolve('prebuildify/bin.js');
const result = spawnSync(
  process.execPath,
  [prebuildify, '--napi', '--strip', '--node-gyp', path.join(__dirname, 'prebuild-compile.js')],
  { cwd: staging, stdio: 'inherit' },
);
if (result.status !== 0) process.exit(result.status ?? 1);

// One folder per libtorch (libtorch-2.14, libtorch-2.6-cuda): a package may carry several, and the
// loader (src/native-loader.ts) loads the one whose libtorch is on this machine.
const built = fs.readdirSync(path.join(staging, 'prebuilds', platform)).find((name) => name.endsWith('.node'));
const stagedBinary = path.join(staging, 'prebuilds', platform, built);
const { build } = require(stagedBinary).runtimeInfo();
const manifest = { torchVersion: build.torchVersion, libtorchSource: build.libtorchSource, cuda: build.cuda };
const [major, minor] = manifest.torchVersion.split('.');
const folder = path.join(root, 'prebuilds', platform, `libtorch-${major}.${minor}${manifest.cuda ? '-cuda' : ''}`);
fs.rmSync(folder, { recursive: true, force: true });
fs.mkdirSync(folder, { recursive: true });
const binary = path.join(folder, 'firebrand.napi.node');
fs.copyFileSync(stagedBinary, binary);
fs.rmSync(staging, { recursive: true, force: true });
fs.writeFileSync(path.join(folder, 'firebrand.libtorch.json'), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(
  `firebrand: ${path.relative(root, binary)} built against libtorch ${manifest.torchVersion} (${manifest.libtorchSource})`,
);

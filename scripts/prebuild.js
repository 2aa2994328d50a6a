#!/usr/bin/env node
// npm run build:prebuild: makes prebuilds/<platform>-<arch>/firebrand.napi.node
// with prebuildify (Node-API, stripped) from a cmake-js build against the
// libtorch found, and records that libtorch next to it
// (firebrand.libtorch.json) so that a load failure can name it.
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

const folder = path.join(root, 'prebuilds', platform);
fs.rmSync(folder, { recursive: true, force: true });
fs.mkdirSync(folder, { recursive: true });
// prebuildify 6 names the file after the package only; the .napi tag is what node-gyp-build matches on.
const built = fs.readdirSync(path.join(staging, 'prebuilds', platform)).find((name) => name.endsWith('.node'));
const binary = path.join(folder, built.replace(/\.node$/, '.napi.node'));
fs.renameSync(path.join(staging, 'prebuilds', platform, built), binary);
fs.rmSync(staging, { recursive: true, force: true });

const { build } = require(binary).runtimeInfo();
const manifest = { torchVersion: build.torchVersion, libtorchSource: build.libtorchSource, cuda: build.cuda };
fs.writeFileSync(path.join(folder, 'firebrand.libtorch.json'), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`firebrand: ${path.relative(root, binary)} built against libtorch ${manifest.torchVersion} (${manifest.libtorchSource})`);

#!/usr/bin/env node
// npm run prebuild: makes prebuilds/<platform>-<arch>/firebrand.napi.node with
// prebuildify (Node-API tag, stripped) from a cmake-js build against the
// libtorch found, and records that libtorch next to it
// (firebrand.libtorch.json) so that a load failure can name it.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const prebuildify = require.resolve('prebuildify/bin.js');
const result = spawnSync(
  process.execPath,
  [prebuildify, '--napi', '--strip', '--node-gyp', path.join(__dirname, 'prebuild-compile.js')],
  { cwd: root, stdio: 'inherit' },
);
if (result.status !== 0) process.exit(result.status ?? 1);

const folder = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`);
const binary = fs.readdirSync(folder).find((name) => name.endsWith('.node'));
const { build } = require(path.join(folder, binary)).runtimeInfo();
const manifest = { torchVersion: build.torchVersion, libtorchSource: build.libtorchSource, cuda: build.cuda };
fs.writeFileSync(path.join(folder, 'firebrand.libtorch.json'), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`firebrand: ${path.relative(root, path.join(folder, binary))} built against libtorch ${manifest.torchVersion} (${manifest.libtorchSource})`);

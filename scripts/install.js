#!/usr/bin/env node
// `npm install` hook: use a binary that loads (a prebuild from prebuilds/ or
// an earlier local build) and otherwise build from source against the
// libtorch found (see CMakeLists.txt). FIREBRAND_BUILD_FROM_SOURCE=1 forces a build.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

function loadsExistingBinary() {
  try {
    require('node-gyp-build')(root);
    return true;
  } catch {
    return false;
  }
}

if (!process.env.FIREBRAND_BUILD_FROM_SOURCE && loadsExistingBinary()) {
  console.log('firebrand: using an existing native binary (set FIREBRAND_BUILD_FROM_SOURCE=1 to rebuild)');
  process.exit(0);
}
const build = spawnSync(process.execPath, [path.join(__dirname, 'build-native.js')], { cwd: root, stdio: 'inherit' });
process.exit(build.status ?? 1);

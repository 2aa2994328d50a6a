#!/usr/bin/env node
// What prebuildify runs in place of node-gyp (--node-gyp), in the staging
// folder scripts/prebuild.js gives it: firebrand builds with cmake-js, so the
// node-gyp arguments (rebuild --target=... --release) are ignored;
// build-native.js builds the repository's build/Release/firebrand.node, and a
// copy goes to the staging folder's build/Release for prebuildify to strip and
// move (the original stays: a running process may have it loaded).
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const build = spawnSync(process.execPath, [path.join(__dirname, 'build-native.js')], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const staged = path.join(process.cwd(), 'build', 'Release');
fs.mkdirSync(staged, { recursive: true });
fs.copyFileSync(path.join(root, 'build', 'Release', 'firebrand.node'), path.join(staged, 'firebrand.node'));

#!/usr/bin/env node
// What prebuildify runs in place of node-gyp (--node-gyp): firebrand builds
// with cmake-js, so the node-gyp arguments (rebuild --target=... --release)
// are ignored and build-native.js builds build/Release/firebrand.node.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const build = spawnSync(process.execPath, [path.join(__dirname, 'build-native.js')], { stdio: 'inherit' });
process.exit(build.status ?? 1);

#!/usr/bin/env node
// `npm install` hook: use a binary that loads here (a local build, or the
// package's prebuild for this machine's libtorch) and otherwise build from
// source against the libtorch found (see CMakeLists.txt), saying why.
// FIREBRAND_BUILD_FROM_SOURCE=1 forces a build.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
// The package's compiled loader: the one that picks a binary at run time decides here too.
const loaderFile = path.join(root, 'dist', 'src', 'native-loader.js');

function buildFromSource(why) {
  console.log(`firebrand: ${why}\nfirebrand: building from source against the libtorch found`);
  const build = spawnSync(process.execPath, [path.join(__dirname, 'build-native.js')], { cwd: root, stdio: 'inherit' });
  process.exit(build.status ?? 1);
}

if (process.env.FIREBRAND_BUILD_FROM_SOURCE) buildFromSource('FIREBRAND_BUILD_FROM_SOURCE is set');
// A git checkout before `npm run build:ts` has no compiled loader: developers build from source.
if (!fs.existsSync(loaderFile)) buildFromSource('no compiled loader (a source checkout)');

const { loadNativeBinding } = require(loaderFile);
let loaded;
try {
  loaded = loadNativeBinding(root);
} catch (error) {
  // The loader's own fix ("npm rebuild firebrand") is what happens next, so only its cause is shown.
  buildFromSource(error.message.replace(/\nTo fix it[\s\S]*$/, '').replace(/^firebrand: /, ''));
}
for (const prebuild of loaded.skipped) {
  console.log(
    `firebrand: skipped the prebuild for libtorch ${prebuild.manifest?.torchVersion ?? '(unknown)'}: ${prebuild.reason}`,
  );
}
const against = loaded.manifest
  ? ` for libtorch ${loaded.manifest.torchVersion} (${loaded.manifest.libtorchSource})`
  : '';
console.log(
  `firebrand: using the ${loaded.kind}${against}: ${path.relative(root, loaded.file)} (FIREBRAND_BUILD_FROM_SOURCE=1 rebuilds)`,
);

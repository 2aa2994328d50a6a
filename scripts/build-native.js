#!/usr/bin/env node
// Builds firebrand.node from source with cmake-js (run by `npm install` when
// no prebuilt binary fits, or by `npm run build:native`). On failure it says
// what to do in a few lines instead of leaving users with a CMake log.
'use strict';
const { spawnSync } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const cmakeJs = require.resolve('cmake-js/bin/cmake-js');
const jobs = String(Math.max(1, os.availableParallelism ? os.availableParallelism() : os.cpus().length));
const args = [cmakeJs, 'build', '--parallel', jobs, ...process.argv.slice(2)];

const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
if (result.status !== 0) {
  console.error(`
firebrand: the native build failed (see the messages above).
  - libtorch not found? On Debian/Ubuntu run as root: bash ${path.join(root, 'scripts', 'setup-debian.sh')}
    elsewhere set LIBTORCH=/path/to/libtorch (unpacked LibTorch zip) or Torch_DIR, or pip install torch.
  - cmake or a C++17 compiler missing (C++20 for libtorch 2.14)? Install cmake >= 3.18 and g++ >= 10 (or clang >= 12).
  - then run: npm run build:native`);
  process.exit(result.status ?? 1);
}

// The npm package as users get it: `npm pack`, then `npm install <tarball>`
// in a fresh project outside the repo. With the prebuild for this machine's
// libtorch nothing compiles, whatever other libtorch versions' prebuilds the
// package holds; without one the install builds from source and says why.
// Either way a TypeScript file that touches the whole public API type-checks
// (strict, no skipLibCheck) and trains, and so does an ES module.
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { native } from '../src/native';
import { writeUnloadablePrebuild } from './support/helpers';

const repo = path.resolve(__dirname, '..', '..');
const fixture = path.join(repo, 'test', 'fixtures', 'package-consumer');
const npm = 'npm';
const SOURCE_INSTALL = process.env.FIREBRAND_TEST_SOURCE_INSTALL === '1';
const platform = `${process.platform}-${process.arch}`;

/** Runs a command to success; returns its stdout and stderr. */
function spawnChecked(command: string, args: string[], cwd: string): { stdout: string; stderr: string } {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** Runs a command to success; returns its output, stdout then stderr. */
function run(command: string, args: string[], cwd: string): string {
  const { stdout, stderr } = spawnChecked(command, args, cwd);
  return `${stdout}\n${stderr}`;
}

/** A fresh project with the tarball installed; returns the install's output. */
function installInto(project: string, tarball: string): string {
  fs.mkdirSync(project, { recursive: true });
  // npm 12 runs a dependency's install script only when the project allows it (allowScripts: by
  // name from the registry, by `file:<path>` for a tarball); older npm ignores the field.
  const consumer = {
    name: 'consumer',
    version: '1.0.0',
    private: true,
    allowScripts: { firebrand: true, [`file:${tarball}`]: true },
  };
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify(consumer));
  for (const file of ['train.ts', 'train.mjs', 'tsconfig.json'])
    fs.copyFileSync(path.join(fixture, file), path.join(project, file));
  return run(npm, ['install', '--no-audit', '--no-fund', '--foreground-scripts', tarball], project);
}

/** The tarball unpacked, changed by `edit` (given the package folder) and packed again as `name`. */
function repacked(work: string, tarball: string, name: string, edit: (packageFolder: string) => void): string {
  const unpacked = path.join(work, `${name}-unpacked`);
  fs.mkdirSync(unpacked);
  run('tar', ['-xzf', tarball, '-C', unpacked], work);
  edit(path.join(unpacked, 'package'));
  const file = path.join(work, `${name}.tgz`);
  run('tar', ['-czf', file, '-C', unpacked, 'package'], work);
  return file;
}

/** The README's `package.json` and `tsconfig.json` blocks (its TypeScript project set-up). */
function readmeProjectFiles(): { packageJson: Record<string, unknown>; tsconfig: Record<string, unknown> } {
  const readme = fs.readFileSync(path.join(repo, 'README.md'), 'utf8');
  const block = (file: string) => {
    const match = new RegExp('`' + file.replace('.', '\\.') + '`[^\\n]*:\\n\\n```json\\n([\\s\\S]*?)\\n```').exec(
      readme,
    );
    if (match === null) throw new Error(`README.md has no json block after \`${file}\``);
    return JSON.parse(match[1]) as Record<string, unknown>;
  };
  return { packageJson: block('package.json'), tsconfig: block('tsconfig.json') };
}

/** Type-checks and runs the consumer's TypeScript file and its ES module; returns their last losses. */
function trainInConsumer(project: string): number[] {
  const tsc = path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
  run(
    process.execPath,
    [tsc, '-p', 'tsconfig.json', '--typeRoots', path.join(repo, 'node_modules', '@types')],
    project,
  );
  const commonJs = JSON.parse(run(process.execPath, ['dist/train.js'], project).trim().split('\n')[0]) as {
    loss: number;
    exported: number;
  };
  expect(commonJs.exported).to.equal(14);
  const esm = JSON.parse(run(process.execPath, ['train.mjs'], project).trim().split('\n')[0]) as { loss: number };
  return [commonJs.loss, esm.loss];
}

describe('the npm package', function () {
  this.timeout(SOURCE_INSTALL ? 1_800_000 : 300_000);
  let work: string;
  let tarball: string;
  // The prebuild the package holds for this machine's libtorch: libtorch-<major>.<minor>.
  let ownPrebuild: string;

  before(() => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-package-'));
    run(process.execPath, [path.join(repo, 'scripts', 'prebuild.js')], repo);
    // The tarball is the one file packed into `work` (npm's --json output changed shape in npm 12:
    // an object by package name instead of an array, after prepack's own output).
    spawnChecked(npm, ['pack', '--pack-destination', work], repo);
    const packed = fs.readdirSync(work).filter((file) => file.endsWith('.tgz'));
    expect(packed, `npm pack wrote ${packed.join(', ')}`).to.have.length(1);
    tarball = path.join(work, packed[0]);
    const [major, minor] = native.runtimeInfo().build.torchVersion.split('.');
    ownPrebuild = `prebuilds/${platform}/libtorch-${major}.${minor}`;
  });

  after(() => fs.rmSync(work, { recursive: true, force: true }));

  it('holds what users need and nothing else, with typed entry points and no `any` in its types', () => {
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).trim().split('\n');
    for (const needed of [
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'src/esm/index.mjs',
      'dist/src/cli/main.js',
      'CMakeLists.txt',
      'native/core/train/training_engine.cpp',
      'scripts/install.js',
      `${ownPrebuild}/firebrand.libtorch.json`,
      `${ownPrebuild}/firebrand.napi.node`,
    ]) {
      expect(files, needed).to.include(`package/${needed}`);
    }
    // Every prebuild made here (other libtorch versions' too: the sid CI leg adds 2.14's to 1.13's) ships.
    const made = fs
      .readdirSync(path.join(repo, 'prebuilds', platform))
      .map((folder) => `package/prebuilds/${platform}/${folder}/firebrand.napi.node`);
    expect(files).to.include.members(made);
    expect(
      files.filter((file) => /^package\/(test|dist\/test|build|node_modules|examples)\//.test(file)),
    ).to.deep.equal([]);
    const manifest = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8')) as {
      engines: object;
      exports: Record<string, object>;
    };
    expect(manifest.engines).to.have.property('node');
    expect(manifest.exports['.']).to.have.keys('types', 'import', 'require');
    const anyTypes: string[] = [];
    const walk = (folder: string): void => {
      for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
        const file = path.join(folder, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (entry.name.endsWith('.d.ts')) {
          fs.readFileSync(file, 'utf8')
            .split('\n')
            .forEach((line, i) => {
              const code = line.replace(/\/\/.*$/, '').replace(/\/\*.*?\*\//g, '');
              if (!/^\s*\*/.test(code) && /\bany\b/.test(code))
                anyTypes.push(`${path.relative(repo, file)}:${i + 1}: ${line.trim()}`);
            });
        }
      }
    };
    walk(path.join(repo, 'dist', 'src'));
    expect(anyTypes).to.deep.equal([]);
  });

  it('installs with the prebuild, compiling nothing, and trains from TypeScript and ESM', () => {
    const project = path.join(work, 'with-prebuild');
    const output = installInto(project, tarball);
    const { torchVersion } = native.runtimeInfo().build;
    expect(output).to.contain(`firebrand: using the prebuild for libtorch ${torchVersion}`);
    expect(output).to.contain(`${ownPrebuild}/firebrand.napi.node`);
    expect(fs.existsSync(path.join(project, 'node_modules', 'firebrand', 'build'))).to.equal(false);
    for (const loss of trainInConsumer(project)) expect(loss).to.be.a('number').and.satisfy(Number.isFinite);
    const doctor = run(
      process.execPath,
      [path.join(project, 'node_modules', 'firebrand', 'dist', 'src', 'cli', 'main.js'), 'doctor'],
      project,
    );
    expect(doctor).to.match(
      new RegExp(
        `binary: +prebuild \\S*${ownPrebuild}/firebrand\\.napi\\.node \\(built against libtorch ${torchVersion}`,
      ),
    );
    expect(doctor).to.match(/smoke test: +ok/);
  });

  it("sets up a TypeScript project as the README's package.json and tsconfig.json do: ESM, top-level await, nodenext", () => {
    const project = path.join(work, 'readme-project');
    fs.mkdirSync(project, { recursive: true });
    const { packageJson, tsconfig } = readmeProjectFiles();
    const allowScripts = { ...(packageJson.allowScripts as Record<string, boolean>), [`file:${tarball}`]: true };
    const consumer = { name: 'readme-project', version: '1.0.0', private: true, ...packageJson, allowScripts };
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify(consumer));
    fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
    fs.copyFileSync(path.join(fixture, 'top-level.ts'), path.join(project, 'train.ts'));
    run(npm, ['install', '--no-audit', '--no-fund', tarball], project);
    const tsc = path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
    run(
      process.execPath,
      [tsc, '-p', 'tsconfig.json', '--typeRoots', path.join(repo, 'node_modules', '@types')],
      project,
    );
    const { loss } = JSON.parse(run(process.execPath, ['dist/train.js'], project).trim().split('\n')[0]) as {
      loss: number;
    };
    expect(loss).to.be.a('number').and.satisfy(Number.isFinite);
  });

  it("picks this machine's libtorch among prebuilds for several, naming the ones it skips", () => {
    // A prebuild for a newer libtorch than any here is tried first and cannot load.
    let missing = '';
    const several = repacked(work, tarball, 'several-prebuilds', (packageFolder) => {
      missing = writeUnloadablePrebuild(path.join(packageFolder, 'prebuilds', platform, 'libtorch-99.0'), '99.0');
    });
    const project = path.join(work, 'several-prebuilds');
    const output = installInto(project, several);
    const { torchVersion } = native.runtimeInfo().build;
    expect(output).to.contain(
      `firebrand: skipped the prebuild for libtorch 99.0: it needs ${missing}, which is not installed`,
    );
    expect(output).to.contain(`firebrand: using the prebuild for libtorch ${torchVersion}`);
    expect(fs.existsSync(path.join(project, 'node_modules', 'firebrand', 'build'))).to.equal(false);
    const doctor = run(
      process.execPath,
      [path.join(project, 'node_modules', 'firebrand', 'dist', 'src', 'cli', 'main.js'), 'doctor'],
      project,
    );
    expect(doctor).to.match(new RegExp(`binary: +prebuild \\S*${ownPrebuild}/firebrand\\.napi\\.node`));
    expect(doctor).to.match(
      new RegExp(
        `skipped: +prebuild for libtorch 99\\.0 \\S*libtorch-99\\.0/firebrand\\.napi\\.node: it needs ${missing.replace(/\./g, '\\.')}`,
      ),
    );
    expect(doctor).to.match(/smoke test: +ok/);
  });

  it("builds from source when no prebuild in the package fits this machine's libtorch, says so, and trains the same way", function () {
    if (!SOURCE_INSTALL) {
      console.log(
        '      (skipped: a source install compiles the addon, ~8 min on 2 cores; FIREBRAND_TEST_SOURCE_INSTALL=1 runs it)',
      );
      this.skip();
    }
    let missing = '';
    const foreign = repacked(work, tarball, 'foreign-prebuild', (packageFolder) => {
      fs.rmSync(path.join(packageFolder, 'prebuilds'), { recursive: true, force: true });
      missing = writeUnloadablePrebuild(path.join(packageFolder, 'prebuilds', platform, 'libtorch-99.0'), '99.0');
    });
    const project = path.join(work, 'from-source');
    const output = installInto(project, foreign);
    expect(output).to.contain(`cannot load its prebuild`);
    expect(output).to.contain(`it needs ${missing}`);
    expect(output).to.contain('firebrand: building from source against the libtorch found');
    expect(output).to.match(/firebrand: libtorch .* from /);
    expect(
      fs.existsSync(path.join(project, 'node_modules', 'firebrand', 'build', 'Release', 'firebrand.node')),
    ).to.equal(true);
    for (const loss of trainInConsumer(project)) expect(loss).to.be.a('number').and.satisfy(Number.isFinite);
    const doctor = run(
      process.execPath,
      [path.join(project, 'node_modules', 'firebrand', 'dist', 'src', 'cli', 'main.js'), 'doctor'],
      project,
    );
    expect(doctor).to.match(/binary: +local build \S*node_modules\/firebrand\/build\/Release\/firebrand\.node/);
    expect(doctor).to.match(/smoke test: +ok/);
  });
});

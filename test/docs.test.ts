// The README and docs/ are tested: every ```ts block is type-checked against
// the package's types (tsc --noEmit, strict), and the complete programs among
// them (those importing from 'firebrand' and needing nothing else) run,
// shortened to a few optimizer steps. Blocks that use a name they do not
// define get it from PRELUDE, declared with its type.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.join(__dirname, '..', '..');
const work = path.join(root, 'dist', 'readme-blocks');

// Names README snippets use without defining them, and their types.
const PRELUDE: Record<string, string> = {
  trainSet: 'Dataset',
  valSet: 'Dataset',
  data: 'Dataset',
  evalData: 'Dataset',
  trainer: 'Trainer',
  model: 'ModelSpec',
  loss: "'cross_entropy'",
  optimizer: "'adamw'",
  source: 'string',
  weightsFile: 'string',
  run: '{ log(data: object, options: { step: number }): void }',
};
// What the prelude imports from 'firebrand' (unless the block imports it itself).
const PRELUDE_IMPORTS = ['Dataset', 'EarlyStopping', 'Model', 'nn', 'Trainer'];
const PRELUDE_TYPE_IMPORTS = ['Logger', 'ModelSpec', 'ValidationLogs'];

interface Block {
  file: string; // README.md, docs/guides/data.md
  line: number; // of the block's first code line in the file
  code: string;
}

/** README.md and every page under docs/, by path from the repository. */
function documents(): string[] {
  const pages = (folder: string): string[] =>
    fs.readdirSync(path.join(root, folder), { withFileTypes: true }).flatMap((entry) => {
      const page = path.join(folder, entry.name);
      return entry.isDirectory() ? pages(page) : entry.name.endsWith('.md') ? [page] : [];
    });
  return ['README.md', ...pages('docs').sort()];
}

function tsBlocks(): Block[] {
  const blocks: Block[] = [];
  for (const file of documents()) {
    const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (lines[i].trim() !== '```ts') continue;
      const end = lines.indexOf('```', i + 1);
      blocks.push({ file, line: i + 2, code: lines.slice(i + 1, end).join('\n') });
      i = end;
    }
  }
  return blocks;
}

function imported(code: string): Set<string> {
  const names = new Set<string>();
  for (const match of code.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'firebrand'/g)) {
    for (const name of match[1].split(',')) names.add(name.replace(/^\s*type\s+/, '').trim());
  }
  return names;
}

function defines(code: string, name: string): boolean {
  return new RegExp(`\\b(const|let|var|class|function)\\s+${name}\\b|\\b(const|let|var)\\s*\\{[^}]*\\b${name}\\b`).test(
    code,
  );
}

/** The names of PRELUDE a block uses without defining. */
function freeNames(code: string): string[] {
  // A use is the name as a value: not a property key (`model: ...`) or a member (`.model`).
  return Object.keys(PRELUDE).filter(
    (name) => new RegExp(`(?<![.\\w])${name}\\b(?!\\s*:)`).test(code) && !defines(code, name),
  );
}

function withPrelude(block: Block): { text: string; preludeLines: number } {
  const own = imported(block.code);
  const values = PRELUDE_IMPORTS.filter((name) => !own.has(name));
  const types = PRELUDE_TYPE_IMPORTS.filter((name) => !own.has(name));
  const prelude = [
    `import { ${values.join(', ')} } from 'firebrand';`,
    `import type { ${types.join(', ')} } from 'firebrand';`,
    ...freeNames(block.code).map((name) => `declare const ${name}: ${PRELUDE[name]};`),
    `export {};`,
  ];
  return { text: `${prelude.join('\n')}\n${block.code}\n`, preludeLines: prelude.length };
}

describe('README.md and docs/', () => {
  const blocks = tsBlocks();

  it('links only to pages and files that exist, and the README only to what the package ships', () => {
    const shipped = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { files: string[] }).files;
    const broken: string[] = [];
    for (const page of documents()) {
      const text = fs.readFileSync(path.join(root, page), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const file = path.normalize(path.join(path.dirname(page), target));
        if (!fs.existsSync(path.join(root, file))) broken.push(`${page}: ${target} (no ${file})`);
        else if (page === 'README.md' && !shipped.some((entry) => file === entry || file.startsWith(`${entry}/`)))
          broken.push(`${page}: ${target} (the package does not ship ${file})`);
      }
    }
    expect(broken).to.deep.equal([]);
  });

  it('has ts blocks to check', () => {
    expect(blocks.length).to.be.at.least(5);
  });

  it('every ts block type-checks against the package (strict)', () => {
    fs.rmSync(work, { recursive: true, force: true });
    fs.mkdirSync(work, { recursive: true });
    const preludeLines: number[] = [];
    blocks.forEach((block, i) => {
      const { text, preludeLines: lines } = withPrelude(block);
      preludeLines.push(lines);
      fs.writeFileSync(path.join(work, `block-${i}.ts`), text);
    });
    fs.writeFileSync(
      path.join(work, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'ES2022',
          moduleResolution: 'node',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
          typeRoots: [path.join(root, 'node_modules', '@types')],
          baseUrl: '.',
          paths: { firebrand: [path.join(root, 'dist', 'src', 'index.d.ts')] },
        },
        include: ['block-*.ts'],
      }),
    );
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = spawnSync(process.execPath, [tsc, '-p', work, '--pretty', 'false'], { encoding: 'utf8' });
    // Each error as <page>:<line>, the line of the block's code at fault.
    const errors = result.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) =>
        line.replace(
          /^(?:\S*\/)?block-(\d+)\.ts\((\d+),(\d+)\)/,
          (_all, block: string, row: string, column: string) => {
            const index = Number(block);
            return `${blocks[index].file}:${blocks[index].line + Number(row) - 1 - preludeLines[index]}:${column}`;
          },
        ),
      );
    expect(errors, errors.join('\n')).to.deep.equal([]);
    expect(result.status).to.equal(0);
  });

  it('the complete programs among them run (shortened to 5 optimizer steps)', function () {
    const programs = blocks.filter((block) => imported(block.code).size > 0 && freeNames(block.code).length === 0);
    expect(programs.length).to.be.at.least(1);
    const fashionMnist = '/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz';
    if (!fs.existsSync(fashionMnist)) {
      console.log(`      skipped: the README example reads ${fashionMnist} (apt-get install dataset-fashion-mnist)`);
      this.skip();
    }
    const entry = path.join(root, 'src', 'esm', 'index.mjs');
    programs.forEach((block, i) => {
      // The one change: a few steps instead of the full run, so the test stays short.
      const shortened = block.code.replace(/config: \{/g, 'config: { maxSteps: 5, progressBar: false,');
      const { outputText } = ts.transpileModule(shortened, {
        compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
      });
      const file = path.join(work, `program-${i}.mjs`);
      fs.writeFileSync(file, outputText.replace(/from 'firebrand'/g, `from ${JSON.stringify(entry)}`));
      const result = spawnSync(process.execPath, [file], { cwd: root, encoding: 'utf8' });
      expect(result.status, `${block.file}:${block.line}: ${result.stderr}`).to.equal(0);
      expect(result.stdout.trim(), `${block.file}:${block.line}`).to.not.equal('');
    });
  });
});

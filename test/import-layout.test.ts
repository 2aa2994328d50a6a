// src/'s folders form layers, as native/core's do (source-layout.test.ts): a
// folder imports only folders of lower layers, and no file imports, value or
// type, closes a cycle. A room of several folders (training and the hooks it
// runs) may import within itself, files still in no cycle.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

const src = path.join(__dirname, '..', '..', 'src');

// Lowest first, each layer a list of rooms: a folder, or folders that may import each other (the trainer
// and the callbacks, loggers and progress bar whose hooks it runs). '.' is src's own files (errors, the
// native binding's declarations), below every folder; index.ts, the package's entry, is above all. A
// folder's subfolders belong to its room.
const layers: (string | string[])[][] = [
  ['.'],
  ['options', 'io', 'distributed'],
  ['tables', 'nn'],
  ['images', 'pretrained'],
  ['preprocessing', 'text'],
  ['data', 'export'],
  ['inference'],
  [['training', 'callbacks', 'logging', 'progress']],
  ['serving', 'report'],
  ['cli'],
];
/** Each folder's layer, and its room's name (its first folder). */
const placeOf = new Map(
  layers.flatMap((rooms, layer) =>
    rooms.flatMap((room) => [room].flat().map((folder) => [folder, { layer, room: [room].flat()[0] }] as const)),
  ),
);
const ENTRY = 'index.ts';

function sources(folder: string): string[] {
  return fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(folder, entry.name);
    if (entry.isDirectory()) return sources(file);
    return /\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [file] : [];
  });
}

/** The src files `file` imports (static, type-only, re-exports, side effects and dynamic imports). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const specifiers = [
    ...text.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'/gms),
    ...text.matchAll(/^import\s+'([^']+)'/gm),
    ...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
  ].map((match) => match[1]);
  return specifiers
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => {
      const target = path.resolve(path.dirname(file), specifier);
      const found = [`${target}.ts`, path.join(target, 'index.ts')].find((candidate) => fs.existsSync(candidate));
      if (found === undefined)
        throw new Error(`${path.relative(src, file)} imports ${specifier}, which is no src file`);
      return found;
    });
}

/** `file`'s room: its top folder under src, or '.' for src's own files. */
function roomOf(file: string): string {
  const relative = path.relative(src, file);
  return relative.includes(path.sep) ? relative.split(path.sep)[0] : '.';
}

/** Each import cycle among `graph`'s files, as the files on it (Tarjan's strongly connected components). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file) as number);
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file) as number, low.get(next) as number));
      } else if (stack.includes(next)) {
        low.set(file, Math.min(low.get(file) as number, index.get(next) as number));
      }
    }
    if (low.get(file) === index.get(file)) {
      const component = stack.splice(stack.indexOf(file));
      if (component.length > 1 || (graph.get(file) ?? []).includes(file)) found.push(component);
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found.map((component) => component.map((file) => path.relative(src, file)).sort());
}

describe('import layout', () => {
  const files = sources(src);
  const graph = new Map(files.map((file) => [file, importsOf(file)]));

  it('no src file imports, value or type, closes a cycle', () => {
    expect(cycles(graph)).to.deep.equal([]);
  });

  it('src folders import only folders of lower layers (a room within itself)', () => {
    const folders = new Set(files.filter((file) => path.relative(src, file) !== ENTRY).map(roomOf));
    expect([...folders].sort()).to.deep.equal([...placeOf.keys()].sort());
    const wrong: string[] = [];
    for (const [file, imported] of graph) {
      if (path.relative(src, file) === ENTRY) continue;
      const own = placeOf.get(roomOf(file)) as { layer: number; room: string };
      for (const target of imported) {
        const theirs =
          path.relative(src, target) === ENTRY
            ? { layer: Infinity, room: ENTRY }
            : (placeOf.get(roomOf(target)) as { layer: number; room: string });
        if (theirs.layer > own.layer || (theirs.layer === own.layer && theirs.room !== own.room)) {
          wrong.push(`${path.relative(src, file)} imports ${path.relative(src, target)}`);
        }
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it('finds a cycle and an upward import when there is one', () => {
    const [a, b, c] = ['a.ts', 'b.ts', 'c.ts'].map((name) => path.join(src, name));
    expect(
      cycles(
        new Map([
          [a, [b]],
          [b, [c]],
          [c, [a]],
        ]),
      ),
    ).to.deep.equal([['a.ts', 'b.ts', 'c.ts']]);
    expect(importsOf(path.join(src, 'training', 'trainer.ts')).map((file) => path.relative(src, file))).to.include(
      'inference/model.ts',
    );
  });
});

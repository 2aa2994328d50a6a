// native/core's folders form layers: a folder includes only folders of lower
// layers (no upward or mutual includes), and no core file knows Node-API.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

const core = path.join(__dirname, '..', '..', 'native', 'core');

// Lowest first; the files at core's root (errors, shapes, tensor dicts) are below every folder.
const layers: string[][] = [
  ['compat', 'io', 'options', 'onnx'],
  ['runtime', 'metrics', 'images'],
  ['data', 'nn', 'optim'],
  ['graph'],
  ['model'],
  ['distributed', 'inference'],
  ['train'],
];

function sources(folder: string): string[] {
  return fs
    .readdirSync(folder)
    .filter((name) => /\.(h|cpp)$/.test(name))
    .map((name) => path.join(folder, name));
}

describe('source layout', () => {
  it('native/core folders include only folders of lower layers, and nothing of Node', () => {
    const folders = fs.readdirSync(core).filter((name) => fs.statSync(path.join(core, name)).isDirectory());
    expect(folders.sort()).to.deep.equal(layers.flat().sort());
    const layerOf = new Map(layers.flatMap((names, level) => names.map((name) => [name, level] as [string, number])));
    const wrong: string[] = [];
    for (const folder of folders) {
      for (const file of sources(path.join(core, folder))) {
        const text = fs.readFileSync(file, 'utf8');
        if (/#include [<"](napi|node_api)/.test(text)) wrong.push(`${path.relative(core, file)} includes Node-API`);
        for (const [, included] of text.matchAll(/#include "core\/([a-z_]+)\//g)) {
          if (included !== folder && (layerOf.get(included) as number) >= (layerOf.get(folder) as number)) {
            wrong.push(`${path.relative(core, file)} includes core/${included}/`);
          }
        }
      }
    }
    for (const file of sources(core)) {
      for (const [, included] of fs.readFileSync(file, 'utf8').matchAll(/#include "core\/([a-z_]+)\//g)) {
        wrong.push(`${path.relative(core, file)} includes core/${included}/`);
      }
    }
    expect(wrong).to.deep.equal([]);
  });
});

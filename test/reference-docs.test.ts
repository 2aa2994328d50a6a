// The reference pages are made from the code (npm run docs:reference: the
// config and op tables, and TypeDoc's API pages from the TSDoc) and committed:
// a page that differs from what the code makes now is stale. The models
// guide's hand-written layer table is checked against the layer schemas.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { configReference, REFERENCE_PAGES } from '../scripts/make-reference-docs';
import { layers } from '../src/nn/layer-schemas';
import { nn } from '../src';

const root = path.join(__dirname, '..', '..');

describe('reference docs', () => {
  for (const [page, make] of Object.entries(REFERENCE_PAGES)) {
    it(`${page} is what the code makes now`, () => {
      const committed = fs.readFileSync(path.join(root, page), 'utf8');
      expect(committed === make(), `${page} is stale: run npm run docs:reference and commit it`).to.equal(true);
    });
  }

  it('docs/api is what TypeDoc makes of the TSDoc now', function () {
    this.timeout(120_000);
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-api-'));
    try {
      const typedoc = path.join(root, 'node_modules', 'typedoc', 'bin', 'typedoc');
      const result = spawnSync(process.execPath, [typedoc, '--out', out, '--logLevel', 'Error'], {
        cwd: root,
        encoding: 'utf8',
      });
      expect(result.status, result.stdout + result.stderr).to.equal(0);
      const pages = (folder: string): string[] =>
        fs
          .readdirSync(folder, { recursive: true, encoding: 'utf8' })
          .filter((file) => file.endsWith('.md'))
          .sort();
      const committed = path.join(root, 'docs', 'api');
      expect(pages(committed), 'run npm run docs:reference and commit docs/api').to.deep.equal(pages(out));
      const stale = pages(out).filter(
        (page) => fs.readFileSync(path.join(out, page), 'utf8') !== fs.readFileSync(path.join(committed, page), 'utf8'),
      );
      expect(stale, 'stale: run npm run docs:reference and commit docs/api').to.deep.equal([]);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  it('gives every config field its meaning from the TSDoc', () => {
    const rows = configReference()
      .split('\n')
      .filter((line) => line.startsWith('| `'));
    expect(rows.length).to.be.above(40);
    const undocumented = rows.filter((row) => row.endsWith('|  |')).map((row) => row.split(' | ')[0]);
    expect(undocumented).to.deep.equal([]);
  });

  it("the models guide's layer table names real layers, and every layer type", () => {
    const guide = fs.readFileSync(path.join(root, 'docs', 'guides', 'models.md'), 'utf8');
    const named = new Set([...guide.matchAll(/`nn\.([a-zA-Z0-9]+)\(/g)].map((match) => match[1]));
    const builders = new Set(Object.keys(nn));
    expect([...named].filter((name) => !builders.has(name))).to.deep.equal([]);
    const types = Object.keys(layers.variants);
    expect(types.filter((type) => !named.has(type))).to.deep.equal([]);
  });
});

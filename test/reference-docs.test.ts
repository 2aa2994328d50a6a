// The reference pages are made from the code (npm run docs:reference) and
// committed: a page that differs from what the code makes now is stale. The
// models guide's hand-written layer table is checked against the layer schemas.
import { expect } from 'chai';
import fs from 'node:fs';
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

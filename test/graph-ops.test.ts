// The ops TypeScript can record and the C++ rows that run and export them are
// one set: an op without a row, a row without its TypeScript, or a row missing
// a form fails here rather than in a user's forward or export.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

import { imageTransforms, RANDOM_IMAGE_TRANSFORMS } from '../src';
import { native } from '../src/native';
import { layers } from '../src/nn/layer-schemas';
import { isFunctionalLayerType } from '../src/nn/module/functional-layers';

const moduleSources = path.join(__dirname, '..', '..', 'src', 'nn');
/** Graph nodes the runtime and the exporter treat apart from op rows: inputs, state reads and layer calls. */
const SPECIAL_NODES = ['input', 'state', 'layer', 'recurrent', 'multiheadAttention'];
const FORMS = ['run', 'torchScript', 'onnx'];
/** Rows that may lack an ONNX form (exportOnnx names them with their module path): none today. */
const WITHOUT_ONNX: string[] = [];

function sourceFiles(folder: string): string[] {
  return fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(folder, entry.name);
    return entry.isDirectory() ? sourceFiles(file) : file.endsWith('.ts') ? [file] : [];
  });
}

/** Every op name a call of op/tensorOp/tensorsOp/recordOp/arith in src/nn can record (`conv${dims}d` for 1-3 dims). */
function recordedOps(): Set<string> {
  const names = new Set<string>();
  for (const file of sourceFiles(moduleSources)) {
    const text = fs.readFileSync(file, 'utf8');
    for (const [, name] of text.matchAll(/\b(?:op|tensorOp|tensorsOp|recordOp|arith)\(\s*['"`]([^'"`]+)['"`]/g)) {
      for (const dims of name.includes('${dims}') ? [1, 2, 3] : [0]) names.add(name.replace('${dims}', String(dims)));
    }
  }
  for (const special of SPECIAL_NODES) names.delete(special);
  return names;
}

const missingForms = (rows: { name: string; forms: string[] }[]) =>
  rows
    .filter((row) =>
      FORMS.some((form) => !row.forms.includes(form) && !(form === 'onnx' && WITHOUT_ONNX.includes(row.name))),
    )
    .map((row) => `${row.name}: ${row.forms.join(', ')}`);

describe('graph op and layer rows', () => {
  it('are the ops TypeScript records, each with every form', () => {
    const rows = native.graphOps();
    const recorded = [...recordedOps()].sort();
    expect(recorded.length).to.be.greaterThan(90);
    expect(rows.map((row) => row.name).sort()).to.deep.equal(recorded);
    expect(missingForms(rows)).to.deep.equal([]);
  });

  it('build every layer type that is not a module recording its F op, each with every form', () => {
    const rows = native.graphLayers();
    const builtIn = Object.keys(layers.variants)
      .filter((type) => !isFunctionalLayerType(type))
      .sort();
    expect(builtIn).to.include.members(['linear', 'conv2d', 'lstm', 'multiheadAttention', 'rmsNorm']);
    expect(rows.map((row) => row.name).sort()).to.deep.equal(builtIn);
    expect(missingForms(rows)).to.deep.equal([]);
  });

  it('image transforms: the builders TypeScript exports are the C++ rows, whose flag says which are random', () => {
    const rows = native.imageTransformRows();
    expect(rows.map((row) => row.name).sort()).to.deep.equal(Object.keys(imageTransforms).sort());
    expect([...RANDOM_IMAGE_TRANSFORMS].sort()).to.deep.equal([
      'colorJitter',
      'randomHorizontalFlip',
      'randomResizedCrop',
    ]);
    expect(rows.filter((row) => row.random).map((row) => row.name)).to.have.members([...RANDOM_IMAGE_TRANSFORMS]);
  });
});

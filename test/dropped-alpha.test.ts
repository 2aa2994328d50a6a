// Mode 'RGB' drops an alpha channel (as torchvision's ImageFolder loader does), keeping whatever colour lies
// under transparent pixels: the image datasets look at a few PNG and WebP files and say so once.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, encodePng } from '../src';

const transparentPng = path.join(__dirname, '..', '..', 'test', 'fixtures', 'images', 'rgba.png');

function codes(warnings: Error[]): string[] {
  return warnings.map((warning) => (warning as { code?: string }).code ?? '').filter((code) => code.length > 0);
}

describe("image datasets read with mode 'RGB' say when transparency is dropped", () => {
  let folder: string;
  const warnings: Error[] = [];
  const listener = (warning: Error) => warnings.push(warning);

  before(async () => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-alpha-'));
    fs.mkdirSync(path.join(folder, 'clear', 'icons'), { recursive: true });
    fs.mkdirSync(path.join(folder, 'opaque', 'icons'), { recursive: true });
    fs.copyFileSync(transparentPng, path.join(folder, 'clear', 'icons', 'logo.png'));
    // Four channels, every pixel opaque: dropping that alpha loses nothing.
    const opaque = Uint8Array.from({ length: 4 * 4 * 4 }, (_, i) => (i >= 48 ? 255 : (i * 37) % 256));
    fs.writeFileSync(
      path.join(folder, 'opaque', 'icons', 'square.png'),
      await encodePng({ data: opaque, shape: [4, 4, 4] }),
    );
    process.on('warning', listener);
  });

  after(() => {
    process.off('warning', listener);
    fs.rmSync(folder, { recursive: true, force: true });
  });

  beforeEach(() => {
    warnings.length = 0;
  });

  const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

  it('warns once, naming the file, for a folder read as RGB (the default)', async () => {
    await Dataset.fromImageFolder(folder);
    await settle();
    const dropped = warnings.filter((warning) => codes([warning])[0] === 'FIREBRAND_ALPHA_DROPPED');
    expect(dropped).to.have.length(1);
    expect(dropped[0].message).to.contain(path.join(folder, 'clear', 'icons', 'logo.png'));
    expect(dropped[0].message).to.match(/has \d+ pixels that are not opaque/);
    expect(dropped[0].message).to.contain("mode: 'RGB_ALPHA' and imageTransforms.flattenAlpha()");
    // The same folder again (a service that reloads it): said already.
    await Dataset.fromImageFolder(folder);
    await settle();
    expect(codes(warnings).filter((code) => code === 'FIREBRAND_ALPHA_DROPPED')).to.have.length(1);
  });

  it('says nothing when the alpha is kept, or when every pixel is opaque', async () => {
    await Dataset.fromImageFolder(folder, { mode: 'RGB_ALPHA' });
    Dataset.fromImageFiles([{ path: path.join(folder, 'opaque', 'icons', 'square.png'), label: 0 }]);
    await settle();
    expect(codes(warnings)).to.not.include('FIREBRAND_ALPHA_DROPPED');
  });

  it('warns for a list of files too, once its look at them is done', async () => {
    Dataset.fromImageFiles([
      { path: path.join(folder, 'opaque', 'icons', 'square.png'), label: 'opaque' },
      { path: path.join(folder, 'clear', 'icons', 'logo.png'), label: 'clear' },
    ]);
    // Until it comes: mocha's timeout is the safety net, not a verdict on speed.
    while (!codes(warnings).includes('FIREBRAND_ALPHA_DROPPED')) await settle();
    expect(codes(warnings)).to.include('FIREBRAND_ALPHA_DROPPED');
  });
});

// Images as uploads and folders bring them: a small file that says it holds
// a huge image is refused before its pixels are allocated (PIL's
// MAX_IMAGE_PIXELS by default), naming the file and its size.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

import { Dataset, decodeImage, MAX_IMAGE_PIXELS } from '../src';
import { rejectionOf } from './support/helpers';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures', 'images');

/** A 1-bit gray PNG of `width` x `height` black pixels: a few KB that decode to width * height bytes. */
function bombPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([1, 0, 0, 0, 0], 8); // bit depth 1, gray, deflate, no filter, no interlace
  const rows = Buffer.alloc(height * (1 + Math.ceil(width / 8)));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(rows, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe('image size limits', function () {
  this.timeout(60_000);

  it('refuses a file that says more than MAX_IMAGE_PIXELS before decoding it, naming it and its size', async () => {
    const bomb = bombPng(12000, 12000);
    expect(bomb.length).to.be.below(100_000);
    expect(MAX_IMAGE_PIXELS).to.equal(89478485);
    const error = await rejectionOf(decodeImage(bomb, { source: 'upload.png' }));
    expect(error.code).to.equal('ERR_FIREBRAND_FILE');
    expect(error.message).to.equal(
      'upload.png: cannot decode the image: it is 12000x12000, 144000000 pixels, over maxPixels (89478485); ' +
        'a file this large is refused unless maxPixels allows it',
    );
    // Under the limit it decodes, as the large one does with the limit lifted.
    expect((await decodeImage(bombPng(300, 200), { mode: 'GRAY' })).shape).to.deep.equal([1, 200, 300]);
    const lifted = await decodeImage(bomb, { mode: 'GRAY', maxPixels: 0 });
    expect(lifted.shape).to.deep.equal([1, 12000, 12000]);
  });

  it('takes maxPixels in decodeImage and image datasets', async () => {
    const bytes = fs.readFileSync(path.join(fixtures, 'rgb.png'));
    const decoded = await decodeImage(bytes);
    const pixels = decoded.shape[1] * decoded.shape[2];
    expect((await decodeImage(bytes, { maxPixels: pixels })).shape).to.deep.equal(decoded.shape);
    expect((await rejectionOf(decodeImage(bytes, { maxPixels: pixels - 1 }))).message).to.contain(
      `${pixels} pixels, over maxPixels (${pixels - 1})`,
    );
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-bomb-'));
    try {
      fs.mkdirSync(path.join(root, 'a'));
      fs.writeFileSync(path.join(root, 'a', 'bomb.png'), bombPng(12000, 12000));
      fs.copyFileSync(path.join(fixtures, 'rgb.png'), path.join(root, 'a', 'fine.png'));
      const data = await Dataset.fromImageFolder(root);
      const error = await rejectionOf(
        (async () => {
          for await (const batch of data.batches({ batchSize: 2 })) expect(batch).to.equal(undefined);
        })(),
      );
      expect(error.message).to.contain(
        `${path.join(root, 'a', 'bomb.png')}: cannot decode the image: it is 12000x12000`,
      );
      expect((await Dataset.fromImageFolder(root, { maxPixels: 0 })).length).to.equal(2);
      const skipping = await Dataset.fromImageFolder(root, { onError: 'skip' });
      let samples = 0;
      for await (const batch of skipping.batches({ batchSize: 2 }))
        samples += (batch.target as { shape: number[] }).shape[0];
      expect(samples).to.equal(1);
      expect(skipping.skippedImages().map((skipped) => skipped.path)).to.deep.equal([path.join(root, 'a', 'bomb.png')]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

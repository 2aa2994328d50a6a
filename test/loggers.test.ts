// Loggers: CSV, JSON Lines and TensorBoard event files, read back here with
// an independent record parser (length, masked CRC-32C, Event protos).
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { Logger, ScalarMetrics } from '../src';
import { blobDataset, blobTrainer, errorOf } from './support/helpers';

/** Bitwise CRC-32C, written apart from the library's table-driven one. */
function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}
const masked = (crc: number) => ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;

type Fields = Map<number, (number | bigint | Uint8Array)[]>;

/** Protocol-buffer fields by number: varints as bigint, fixed64 as double, fixed32 as float, bytes raw. */
function decode(bytes: Uint8Array): Fields {
  const fields: Fields = new Map();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const varint = () => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = bytes[at++];
      value |= BigInt(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return value;
    }
  };
  while (at < bytes.length) {
    const key = Number(varint());
    const [number, wire] = [key >> 3, key & 7];
    let value: number | bigint | Uint8Array;
    if (wire === 0) value = varint();
    else if (wire === 1) ((value = view.getFloat64(at, true)), (at += 8));
    else if (wire === 5) ((value = view.getFloat32(at, true)), (at += 4));
    else if (wire === 2) {
      const length = Number(varint());
      value = bytes.subarray(at, at + length);
      at += length;
    } else throw new Error(`wire type ${wire}`);
    fields.set(number, [...(fields.get(number) ?? []), value]);
  }
  return fields;
}

function readEvents(file: string): Fields[] {
  const data = new Uint8Array(fs.readFileSync(file));
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const events: Fields[] = [];
  for (let at = 0; at < data.length;) {
    const lengthBytes = data.subarray(at, at + 8);
    const length = Number(view.getBigUint64(at, true));
    expect(view.getUint32(at + 8, true), 'length CRC').to.equal(masked(crc32c(lengthBytes)));
    const event = data.subarray(at + 12, at + 12 + length);
    expect(view.getUint32(at + 12 + length, true), 'data CRC').to.equal(masked(crc32c(event)));
    events.push(decode(event));
    at += 12 + length + 4;
  }
  return events;
}

const text = (value: unknown) => new TextDecoder().decode(value as Uint8Array);

describe('loggers', () => {
  it('computes CRC-32C as specified', () => {
    expect(crc32c(new TextEncoder().encode('123456789'))).to.equal(0xe3069283);
  });

  it('writes CSV, JSON Lines and TensorBoard records that read back, and feeds custom loggers', async () => {
    const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-logs-'));
    const received: { metrics: ScalarMetrics; step: number }[] = [];
    const custom: Logger = { logMetrics: (metrics, step) => received.push({ metrics, step }) };
    const trainer = blobTrainer(
      {
        numEpochs: 2,
        batchSize: 16,
        logEvery: 2,
        evalEvery: 3,
        outputDir,
        loggers: ['csv', 'jsonl', 'tensorboard'],
        maxGradNorm: 10,
      },
      { loggers: [custom] },
    );
    await trainer.fit(blobDataset(64), { evalData: blobDataset(32, 4, 2) });
    const logs = path.join(outputDir, 'logs', 'version_0');

    const [header, ...rows] = fs.readFileSync(path.join(logs, 'metrics.csv'), 'utf8').trim().split('\n');
    const columns = header.split(',');
    expect(columns).to.include.members([
      'step',
      'train/loss',
      'train/learningRate',
      'train/gradNorm',
      'val/loss',
      'epoch/loss',
      'epoch/accuracy',
    ]);
    expect(rows.every((row) => row.split(',').length === columns.length)).to.equal(true);
    expect(rows.length).to.equal(received.length);

    const lines = fs
      .readFileSync(path.join(logs, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines[0].hyperparameters).to.include({ batchSize: 16, evalEvery: 3 });
    expect(lines.slice(1).map((line) => line.step)).to.deep.equal(received.map((entry) => entry.step));

    const [eventFile] = fs.readdirSync(path.join(logs, 'tensorboard'));
    expect(eventFile).to.match(/^events\.out\.tfevents\.\d+\./);
    const events = readEvents(path.join(logs, 'tensorboard', eventFile));
    expect(text(events[0].get(3)?.[0])).to.equal('brain.Event:2');
    const scalars: { tag: string; step: number; value: number }[] = [];
    let hyperparameters = '';
    for (const event of events.slice(1)) {
      const step = Number(event.get(2)?.[0] ?? 0n);
      for (const value of decode(event.get(5)?.[0] as Uint8Array).get(1) ?? []) {
        const fields = decode(value as Uint8Array);
        const tag = text(fields.get(1)?.[0]);
        if (fields.has(2)) scalars.push({ tag, step, value: fields.get(2)?.[0] as number });
        else hyperparameters = text(decode(fields.get(8)?.[0] as Uint8Array).get(8)?.[0]);
      }
    }
    expect(hyperparameters).to.contain('| batchSize | 16 |');
    const trainLoss = scalars.filter((entry) => entry.tag === 'train/loss');
    const expected = received.filter((entry) => 'train/loss' in entry.metrics);
    expect(trainLoss.map((entry) => entry.step)).to.deep.equal(expected.map((entry) => entry.step));
    trainLoss.forEach((entry, i) => expect(entry.value).to.equal(Math.fround(expected[i].metrics['train/loss'])));
    expect(scalars.filter((entry) => entry.tag === 'val/loss').map((entry) => entry.step)).to.deep.equal([3, 4, 6, 8]);
    fs.rmSync(outputDir, { recursive: true });
  });

  it('needs outputDir for the built-in loggers', () => {
    expect(errorOf(() => blobTrainer({ loggers: ['csv'] })).message).to.equal(
      'config.loggers: csv write under config.outputDir, which is not set',
    );
  });
});

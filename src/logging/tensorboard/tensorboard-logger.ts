// TensorBoard event files (events.out.tfevents.*): TFRecord framing around
// Event protos, written by hand so no TensorFlow or protobuf package is
// needed. Scalars are simple_value summaries; hyper-parameters a text summary.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { Logger, ScalarMetrics } from '../logger';
import { maskedCrc32c } from './crc32c';
import { concat, field } from './protobuf';

// Field numbers from tensorflow/core/util/event.proto and framework/summary.proto.
const EVENT = { wallTime: 1, step: 2, fileVersion: 3, summary: 5 };
const SUMMARY_VALUE = 1;
const VALUE = { tag: 1, simpleValue: 2, metadata: 9, tensor: 8 };
const METADATA = { pluginData: 1 };
const PLUGIN = { name: 1 };
const TENSOR = { dtype: 1, shape: 2, stringVal: 8 };
const DT_STRING = 7;

export class TensorBoardLogger implements Logger {
  readonly file: string;
  private descriptor: number | undefined;

  /** Writes a new event file in `folder` (TensorBoard's --logdir), opened at the first record. */
  constructor(readonly folder: string) {
    this.file = path.join(
      folder,
      `events.out.tfevents.${Math.floor(Date.now() / 1000)}.${os.hostname()}.${process.pid}`,
    );
  }

  logHyperparameters(hyperparameters: Record<string, unknown>): void {
    const table = ['| name | value |', '|---|---|']
      .concat(Object.entries(hyperparameters).map(([name, value]) => `| ${name} | ${JSON.stringify(value)} |`))
      .join('\n');
    const value = field.message(SUMMARY_VALUE, [
      field.string(VALUE.tag, 'hyperparameters/text_summary'),
      field.message(VALUE.metadata, [field.message(METADATA.pluginData, [field.string(PLUGIN.name, 'text')])]),
      field.message(VALUE.tensor, [
        field.int(TENSOR.dtype, DT_STRING),
        field.message(TENSOR.shape, []),
        field.string(TENSOR.stringVal, table),
      ]),
    ]);
    this.writeEvent([field.message(EVENT.summary, [value])], 0);
  }

  logMetrics(metrics: ScalarMetrics, step: number): void {
    const values = Object.entries(metrics)
      .filter(([, value]) => Number.isFinite(value))
      .map(([tag, value]) =>
        field.message(SUMMARY_VALUE, [field.string(VALUE.tag, tag), field.float(VALUE.simpleValue, value)]),
      );
    if (values.length > 0) this.writeEvent([field.message(EVENT.summary, values)], step);
  }

  /** Flushes the file to disk; a later record reopens it. */
  close(): void {
    if (this.descriptor === undefined) return;
    fs.fsyncSync(this.descriptor);
    fs.closeSync(this.descriptor);
    this.descriptor = undefined;
  }

  private writeEvent(parts: Uint8Array[], step: number): void {
    if (this.descriptor === undefined) {
      fs.mkdirSync(this.folder, { recursive: true });
      const fresh = !fs.existsSync(this.file);
      this.descriptor = fs.openSync(this.file, 'a');
      // Every event file starts with its version record.
      if (fresh) this.writeEvent([field.string(EVENT.fileVersion, 'brain.Event:2')], 0);
    }
    const event = concat([field.double(EVENT.wallTime, Date.now() / 1000), field.int(EVENT.step, step), ...parts]);
    const length = new Uint8Array(8);
    new DataView(length.buffer).setBigUint64(0, BigInt(event.length), true);
    const crc = (bytes: Uint8Array) => {
      const out = new Uint8Array(4);
      new DataView(out.buffer).setUint32(0, maskedCrc32c(bytes), true);
      return out;
    };
    fs.writeSync(this.descriptor as number, concat([length, crc(length), event, crc(event)]));
  }
}

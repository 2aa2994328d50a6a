// model.summary(): a torchinfo-style table of each module call, its output
// shape and its parameter count, from one eval-mode forward of zeros in C++.
import { native } from '../../native';
import { Module } from './module';
import { type GraphModelSpec, traceModule } from './tracer';

export interface SummaryOptions {
  /** The input's dtype (default 'float32'; 'int64' for token ids). */
  dtype?: 'float32' | 'float64' | 'int64' | 'int32';
}

const grouped = (count: number): string => count.toLocaleString('en-US');

/** The table for `spec` run on an input of `inputShape` (batch first). */
export function summarize(spec: GraphModelSpec, inputShape: number[], options: SummaryOptions = {}): string {
  const { nodeShapes: shapes, parameters } = native.NativeModel.summary(spec, inputShape, options.dtype ?? 'float32');
  const count = (prefix: string, trainable?: boolean): number =>
    parameters
      .filter(
        ({ name, requiresGrad }) =>
          (prefix === '' || name.startsWith(`${prefix}.`)) && (trainable === undefined || requiresGrad === trainable),
      )
      .reduce((sum, { shape }) => sum + shape.reduce((a, b) => a * b, 1), 0);
  const calls = spec.graph.calls;
  // A call is the last of its parent's when no sibling follows before the parent's call ends.
  const isLast = calls.map(({ depth }, i) => {
    const next = calls.slice(i + 1).find((call) => call.depth <= depth);
    return next === undefined || next.depth < depth;
  });
  const open: boolean[] = []; // per depth: whether that ancestor still has siblings to come
  const rows = calls.map(({ module, className, depth, output }, i) => {
    open[depth] = !isLast[i];
    const name = module.split('.').pop() as string;
    const indent = open
      .slice(1, depth)
      .map((more) => (more ? '│ ' : '  '))
      .join('');
    const label = depth === 0 ? className : `${indent}${isLast[i] ? '└─' : '├─'}${name} (${className})`;
    const shape = output >= 0 ? shapes[output] : null;
    return [label, shape ? `[${shape.join(', ')}]` : '--', grouped(count(module))];
  });
  const header = ['Layer (type)', 'Output Shape', 'Param #'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === 2 ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
      .join('   ');
  const rule = '='.repeat(line(header).length);
  const total = count('');
  return [
    rule,
    line(header),
    rule,
    ...rows.map(line),
    rule,
    `Total params: ${grouped(total)}`,
    `Trainable params: ${grouped(count('', true))}`,
    `Non-trainable params: ${grouped(count('', false))}`,
    `Input: [${inputShape.join(', ')}] ${options.dtype ?? 'float32'}`,
    rule,
  ].join('\n');
}

declare module './module' {
  interface Module {
    /**
     * A torchinfo-style table: each module call in forward, its output shape for an input of
     * `inputShape` (batch first) and its parameter count, from one eval-mode forward in C++.
     */
    summary(inputShape: number[], options?: SummaryOptions): string;
  }
}

// Defined here, beside the tracer it runs, so that module.ts does not import the tracer.
Module.prototype.summary = function summary(this: Module, inputShape: number[], options: SummaryOptions = {}): string {
  return summarize(traceModule(this), inputShape, options);
};

// The report as one HTML page: uPlot's script and style inlined, the charts'
// data as JSON, and the tables (best metric, confusion matrix, per-class
// metrics, config, misclassified images) written here as HTML.
import fs from 'node:fs';
import path from 'node:path';

import type { ClassificationReport } from '../training/metrics';
import type { MisclassifiedImage } from './misclassified-images';
import { catchErrors, type ChartData, drawCharts } from './page-script';
import type { RunSummary } from './run-summary';

/** One outputDir's part of the page. */
export interface RunSection {
  outputDir: string;
  summary?: RunSummary;
  classes?: string[];
}

/** What a saved model gets wrong of an image folder. */
export interface MisclassifiedSection {
  model: string;
  folder: string;
  images: MisclassifiedImage[];
  total: number;
  wrong: number;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** uPlot's files, from its package (a dependency of firebrand). */
function uPlotAssets(): { script: string; style: string } {
  const dist = path.dirname(require.resolve('uplot'));
  return {
    script: fs.readFileSync(path.join(dist, 'uPlot.iife.min.js'), 'utf8'),
    style: fs.readFileSync(path.join(dist, 'uPlot.min.css'), 'utf8'),
  };
}

function table(
  header: string[],
  rows: (string | number)[][],
  cellStyle?: (row: number, column: number) => string,
  className = 'numbers',
) {
  const head = `<tr>${header.map((cell) => `<th>${escapeHtml(cell)}</th>`).join('')}</tr>`;
  const body = rows
    .map(
      (row, r) =>
        `<tr>${row.map((cell, c) => `<td${cellStyle ? ` style="${cellStyle(r, c)}"` : ''}>${escapeHtml(typeof cell === 'number' ? format(cell) : cell)}</td>`).join('')}</tr>`,
    )
    .join('\n');
  return `<table class="${className}">\n${head}\n${body}\n</table>`;
}

function format(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toPrecision(4);
}

/** Rows true classes, columns predictions; each cell shaded by its share of its row. */
function confusionTable(matrix: number[][], names: string[]): string {
  const totals = matrix.map((row) => row.reduce((sum, count) => sum + count, 0));
  const rows = matrix.map((row, index) => [`${names[index]} (true)`, ...row]);
  const shade = (r: number, c: number) =>
    c === 0 ? '' : `background: rgba(31, 119, 180, ${(matrix[r][c - 1] / Math.max(totals[r], 1)).toFixed(3)})`;
  return table(['', ...names.map((name) => `${name} (predicted)`)], rows, shade);
}

function classReportTable(report: ClassificationReport, names: string[]): string {
  const rows = report.support.map((support, index) => [
    names[index],
    report.precision[index],
    report.recall[index],
    report.f1[index],
    support,
  ]);
  return table(['class', 'precision', 'recall', 'F1', 'support'], rows);
}

function misclassifiedGrid(found: MisclassifiedSection): string {
  const figures = found.images.map(
    (image) =>
      `<figure><img src="${image.source}" alt="${escapeHtml(image.file)}" title="${escapeHtml(image.file)}">` +
      `<figcaption>${escapeHtml(image.truth)} → ${escapeHtml(image.predicted)} (${image.probability.toFixed(2)})</figcaption></figure>`,
  );
  const shown = found.images.length < found.wrong ? `, the first ${found.images.length} shown` : '';
  return (
    `<section><h2>Misclassified images</h2><p>${escapeHtml(found.model)} gets ${found.wrong} of ${found.total} images in ` +
    `${escapeHtml(found.folder)} wrong${shown} (true → predicted, probability).</p>` +
    `<div class="grid">${figures.join('')}</div></section>`
  );
}

function summarySection(section: RunSection): string {
  const { summary } = section;
  const parts = [`<h2>${escapeHtml(section.outputDir)}</h2>`];
  if (summary === undefined) {
    parts.push('<p>No checkpoint: nothing beyond the logs (config.outputDir keeps checkpoints).</p>');
  } else {
    const names = section.classes ?? summary.confusionMatrix?.map((_row, index) => String(index)) ?? [];
    const facts: (string | number)[][] = [
      ['checkpoint', summary.checkpoint],
      ['optimizer steps', summary.globalStep],
      ['training time, s', summary.wallTimeSeconds],
      ['samples per second', summary.samplesPerSecond],
    ];
    if (summary.best)
      facts.push([`best ${summary.best.metric}`, `${format(summary.best.value)} (epoch ${summary.best.epoch})`]);
    parts.push(table(['', ''], facts, undefined, 'facts'));
    if (summary.confusionMatrix) {
      parts.push(`<h3>Confusion matrix, epoch ${summary.epoch}</h3>`, confusionTable(summary.confusionMatrix, names));
    } else {
      parts.push("<p>No confusion matrix: config.metrics did not name 'confusionMatrix'.</p>");
    }
    if (summary.classificationReport) {
      parts.push(
        `<h3>Per-class metrics, epoch ${summary.epoch}</h3>`,
        classReportTable(summary.classificationReport, names),
      );
    }
    const config = Object.entries(summary.config).map(([key, value]) => [key, JSON.stringify(value) ?? '']);
    parts.push('<h3>Config</h3>', table(['key', 'value'], config, undefined, 'facts'));
  }
  return `<section class="run">${parts.join('\n')}</section>`;
}

const STYLE = `body { font: 14px system-ui, sans-serif; margin: 24px; color: #222 }
#charts { display: flex; flex-wrap: wrap; gap: 16px }
.runs { display: flex; gap: 32px; align-items: flex-start }
.run { flex: 1; min-width: 0; overflow-x: auto }
table { border-collapse: collapse; margin: 8px 0 }
td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: right; white-space: nowrap }
.facts td { text-align: left }
.grid { display: flex; flex-wrap: wrap; gap: 8px }
figure { margin: 0; width: 112px; font-size: 11px }
figure img { width: 112px; height: 112px; object-fit: contain; image-rendering: pixelated; background: #eee }`;

/** The whole page; `<` in JSON is escaped so that no value can close the script element. */
export function reportPage(
  title: string,
  charts: ChartData[],
  sections: RunSection[],
  misclassified: MisclassifiedSection | undefined,
): string {
  const { script, style } = uPlotAssets();
  const data = JSON.stringify({ charts }).replace(/</g, '\\u003c');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<script>(${catchErrors.toString()})();</script>
<style>${style}\n${STYLE}</style>
<script>${script}</script>
</head><body>
<h1>${escapeHtml(title)}</h1>
<div id="charts"></div>
<div class="runs">${sections.map(summarySection).join('\n')}</div>
${misclassified ? misclassifiedGrid(misclassified) : ''}
<script type="application/json" id="report-data">${data}</script>
<pre id="report-check" hidden></pre>
<script>(${drawCharts.toString()})();</script>
</body></html>
`;
}

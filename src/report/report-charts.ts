// The report's charts from the runs' logs: one chart per measure ('loss',
// 'accuracy', 'learningRate'), its series every run's train/val/epoch curve
// of it, on the union of their steps.
import type { ChartData } from './page-script';
import type { RunLogs } from './run-logs';

/** Measures first in this order, then the others by name; throughput last. */
const LEADING = ['loss', 'accuracy', 'learningRate', 'gradNorm', 'gradScale'];
const TRAILING = ['stepsPerSecond', 'samplesPerSecond'];

function rank(measure: string): number {
  if (LEADING.includes(measure)) return LEADING.indexOf(measure) - LEADING.length;
  return TRAILING.includes(measure) ? 1 + TRAILING.indexOf(measure) : 0;
}

/** 'val/accuracy' -> ['val', 'accuracy']; a name without a group is its own measure. */
function measureOf(metric: string): [string, string] {
  const slash = metric.indexOf('/');
  return slash < 0 ? ['', metric] : [metric.slice(0, slash), metric.slice(slash + 1)];
}

export function reportCharts(runs: RunLogs[]): ChartData[] {
  const byMeasure = new Map<string, { label: string; steps: number[]; values: number[] }[]>();
  for (const run of runs) {
    for (const [metric, series] of Object.entries(run.metrics)) {
      const [group, measure] = measureOf(metric);
      const label = [runs.length > 1 ? run.name : '', group].filter((part) => part !== '').join(' ');
      const list = byMeasure.get(measure) ?? [];
      list.push({ label: label || measure, ...series });
      byMeasure.set(measure, list);
    }
  }
  const measures = [...byMeasure.keys()].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  return measures.map((measure) => {
    const curves = byMeasure.get(measure) ?? [];
    const steps = [...new Set(curves.flatMap((curve) => curve.steps))].sort((a, b) => a - b);
    const row = new Map(steps.map((step, index) => [step, index]));
    return {
      title: measure,
      steps,
      series: curves.map((curve) => {
        const values: (number | null)[] = steps.map(() => null);
        // A step logged twice (an evaluation and an epoch's end) keeps its last value.
        curve.steps.forEach((step, index) => (values[row.get(step) as number] = curve.values[index]));
        return { label: curve.label, values };
      }),
    };
  });
}

// The report page's own script, run by the browser (its text is put in the
// page): draws each chart with uPlot from the data the page carries, then
// writes back what the charts hold and any error, for the reader's check.
/* The page's globals; this file's code runs there, not in Node. */
declare const document: any;
declare const uPlot: any;
declare const window: any;

/** A chart as the page carries it: one x axis (steps) shared by its series, null where one has no point. */
export interface ChartData {
  title: string;
  steps: number[];
  series: { label: string; values: (number | null)[] }[];
}

/** Draws `#charts` from `#report-data`; writes `#report-check`. Self-contained: the browser runs its text. */
export function drawCharts(): void {
  const errors: string[] = (window.reportErrors ??= []);
  const check = { charts: [] as { title: string; series: { label: string; points: number[][] }[] }[], errors };
  try {
    const charts: ChartData[] = JSON.parse(document.getElementById('report-data').textContent).charts;
    const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
    const container = document.getElementById('charts');
    for (const chart of charts) {
      const box = document.createElement('div');
      box.className = 'chart';
      container.appendChild(box);
      const plot = new uPlot(
        {
          title: chart.title,
          width: 560,
          height: 300,
          scales: { x: { time: false } },
          series: [
            { label: 'step' },
            ...chart.series.map((series, index) => ({
              label: series.label,
              stroke: palette[index % palette.length],
              width: 1.5,
              spanGaps: true,
              points: { show: series.values.filter((value) => value !== null).length < 60 },
            })),
          ],
        },
        [chart.steps, ...chart.series.map((series) => series.values)],
        box,
      );
      const [steps, ...columns] = plot.data as (number | null)[][];
      check.charts.push({
        title: chart.title,
        series: columns.map((values, index) => ({
          label: plot.series[index + 1].label,
          points: steps.flatMap((step, row) => (values[row] === null ? [] : [[step as number, values[row] as number]])),
        })),
      });
    }
  } catch (error) {
    errors.push(String((error as Error)?.stack ?? error));
  }
  document.getElementById('report-check').textContent = JSON.stringify(check);
}

/** Runs first in the page: keeps every uncaught error and console.error for #report-check. */
export function catchErrors(): void {
  const errors: string[] = (window.reportErrors = []);
  window.addEventListener('error', (event: { message: string }) => errors.push(event.message));
  const consoleError = console.error.bind(console);
  console.error = (...args: unknown[]) => {
    errors.push(args.map(String).join(' '));
    consoleError(...args);
  };
}

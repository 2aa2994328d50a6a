// A group of date/time columns as features: each column's parts (year, month,
// day, day of week, day of year, hour, minute) read from ISO 8601 text as
// pandas' .dt accessors give them, the year standardized with the training
// rows' mean and standard deviation, and each cyclic part as the sine and
// cosine of its angle in its cycle, so that December sits beside January.
import { firebrandError } from '../errors';
import { mean } from '../tables/column-statistics';
import type { Table } from '../tables/table';

export type DatetimePart = 'year' | 'month' | 'day' | 'dayOfWeek' | 'dayOfYear' | 'hour' | 'minute';

export interface DatetimeColumns {
  columns: string[];
  /** The parts each column gives. Default ['year', 'month', 'dayOfWeek', 'dayOfYear']. */
  parts?: DatetimePart[];
}

/** What fit learned: the year's standardization per column (StandardScaler's mean_ and scale_). */
export interface FittedDatetime {
  year?: { shift: number[]; divide: number[] };
}

export const DATETIME_PARTS: readonly DatetimePart[] = [
  'year',
  'month',
  'day',
  'dayOfWeek',
  'dayOfYear',
  'hour',
  'minute',
];
export const DEFAULT_DATETIME_PARTS: DatetimePart[] = ['year', 'month', 'dayOfWeek', 'dayOfYear'];

/**
 * Each cyclic part's period and the value its cycle starts at: the angle is 2π (value - start) / period.
 * pandas' dayofweek counts Monday as 0; months, days and days of the year count from 1.
 */
export const CYCLES: Record<Exclude<DatetimePart, 'year'>, { period: number; start: number }> = {
  month: { period: 12, start: 1 },
  day: { period: 31, start: 1 },
  dayOfWeek: { period: 7, start: 0 },
  dayOfYear: { period: 365, start: 1 },
  hour: { period: 24, start: 0 },
  minute: { period: 60, start: 0 },
};

/** A date, or a date and time with an optional offset, as ISO 8601 writes it (pandas' format='ISO8601'). */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?$/;
const DAY_MS = 86_400_000;

/** The wall-clock time `text` writes, in seconds since 1970-01-01 as if it were UTC; undefined if not ISO 8601. */
export function datetimeSeconds(text: string): number | undefined {
  const match = ISO_8601.exec(text.trim());
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1).map((field) => Number(field ?? 0));
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  // A day the month lacks (2023-02-29) would roll into the next month: refused instead.
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) {
    return undefined;
  }
  return Math.floor(date.getTime() / DAY_MS) * 86_400 + hour * 3600 + minute * 60 + second;
}

/** The parts of a time given as datetimeSeconds counts it. */
export function partsOf(seconds: number): Record<DatetimePart, number> {
  const days = Math.floor(seconds / 86_400);
  const date = new Date(days * DAY_MS);
  const year = date.getUTCFullYear();
  const newYear = new Date(0);
  newYear.setUTCFullYear(year, 0, 1);
  const ofDay = seconds - days * 86_400;
  return {
    year,
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    // 1970-01-01 was a Thursday: 3 counting Monday as 0.
    dayOfWeek: (((days + 3) % 7) + 7) % 7,
    dayOfYear: days - Math.round(newYear.getTime() / DAY_MS) + 1,
    hour: Math.floor(ofDay / 3600),
    minute: Math.floor((ofDay % 3600) / 60),
  };
}

/** A column's times in seconds; a missing cell, a number or text that is no ISO 8601 date is named with its row. */
function secondsOf(table: Table, name: string): Float64Array {
  const column: (string | number | null)[] = Array.from(table.column(name) as ArrayLike<string | number | null>);
  return Float64Array.from(column, (cell, row) => {
    const seconds = typeof cell === 'string' ? datetimeSeconds(cell) : undefined;
    if (seconds === undefined) {
      const found =
        cell === null || (typeof cell === 'number' && Number.isNaN(cell))
          ? 'is missing a value'
          : `holds ${JSON.stringify(cell)}`;
      throw firebrandError(
        'ERR_FIREBRAND_DATA',
        `${table.where(row)}: column '${name}' ${found}; a datetime group takes ISO 8601 text (2024-03-01, 2024-03-01T13:45:00, with Z or an offset)`,
      );
    }
    return seconds;
  });
}

export function fitDatetime(group: Required<DatetimeColumns>, table: Table): FittedDatetime {
  if (!group.parts.includes('year')) return {};
  const years = group.columns.map((name) => Array.from(secondsOf(table, name), (seconds) => partsOf(seconds).year));
  const shift = years.map((values) => mean(values));
  // StandardScaler's population standard deviation; a constant year scales by 1.
  const divide = years.map((values, i) => Math.sqrt(mean(values.map((year) => (year - shift[i]) ** 2))) || 1);
  return { year: { shift, divide } };
}

/** The group's output columns for `table`'s rows: per column, its parts in `parts` order (sine, then cosine). */
export function transformDatetime(
  group: Required<DatetimeColumns>,
  fitted: FittedDatetime,
  table: Table,
): Float64Array[] {
  return group.columns.flatMap((name, i) => {
    const parts = Array.from(secondsOf(table, name), partsOf);
    return group.parts.flatMap((part) => {
      if (part === 'year') {
        const { shift, divide } = fitted.year as NonNullable<FittedDatetime['year']>;
        return [Float64Array.from(parts, (value) => (value.year - shift[i]) / divide[i])];
      }
      const { period, start } = CYCLES[part];
      const angles = parts.map((value) => (value[part] - start) * ((2 * Math.PI) / period));
      return [Float64Array.from(angles, Math.sin), Float64Array.from(angles, Math.cos)];
    });
  });
}

/** The output columns' names: "date_year", "date_month_sin", "date_month_cos". */
export function datetimeNames(group: Required<DatetimeColumns>): string[] {
  return group.columns.flatMap((name) =>
    group.parts.flatMap((part) =>
      part === 'year' ? [`${name}_year`] : [`${name}_${part}_sin`, `${name}_${part}_cos`],
    ),
  );
}

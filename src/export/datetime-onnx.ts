// A datetime group's features as ONNX nodes: the column comes in as float64
// seconds since 1970-01-01 of its wall-clock time (datetimeSeconds), and the
// calendar parts are computed in the graph with Howard Hinnant's
// civil_from_days in float64 (every quotient floored, exact for these integers).
import { CYCLES, type DatetimePart, type FittedDatetime } from '../preprocessing/datetime-columns';
import { DOUBLE, Nodes } from './onnx-nodes';

/** The parts of [batch, 1] seconds, each [batch, 1] float64. */
function calendarParts(b: Nodes, seconds: string): Record<DatetimePart, string> {
  const c = (value: number) => b.constant([value], DOUBLE, []);
  const div = (x: string, y: number) => b.op('Floor', [b.op('Div', [x, c(y)])]);
  const add = (x: string, y: string | number) => b.op('Add', [x, typeof y === 'number' ? c(y) : y]);
  const sub = (x: string, y: string) => b.op('Sub', [x, y]);
  const mul = (x: string, y: number) => b.op('Mul', [x, c(y)]);
  const days = div(seconds, 86_400);
  const ofDay = sub(seconds, mul(days, 86_400));
  const hour = div(ofDay, 3600);
  const minute = div(sub(ofDay, mul(hour, 3600)), 60);
  const shifted = add(days, 3); // 1970-01-01 was a Thursday: 3 counting Monday as 0
  const dayOfWeek = sub(shifted, mul(div(shifted, 7), 7));
  // civil_from_days: years from March 1st, so that the leap day ends the year.
  const z = add(days, 719_468);
  const era = div(z, 146_097);
  const doe = sub(z, mul(era, 146_097));
  const yoe = div(add(sub(doe, div(doe, 1460)), sub(div(doe, 36_524), div(doe, 146_096))), 365);
  const doyFromMarch = sub(doe, sub(add(mul(yoe, 365), div(yoe, 4)), div(yoe, 100)));
  const mp = div(add(mul(doyFromMarch, 5), 2), 153);
  const day = add(sub(doyFromMarch, div(add(mul(mp, 153), 2), 5)), 1);
  const month = b.op('Where', [b.op('Less', [mp, c(10)]), add(mp, 3), add(mp, -9)]);
  const marchYear = add(yoe, mul(era, 400));
  const year = b.op('Where', [b.op('Less', [month, c(3)]), add(marchYear, 1), marchYear]);
  // days_from_civil(year, 1, 1): January is month 11 of the March year before.
  const before = add(year, -1);
  const eraBefore = div(before, 400);
  const yoeBefore = sub(before, mul(eraBefore, 400));
  const doeJanuary = add(sub(add(mul(yoeBefore, 365), div(yoeBefore, 4)), div(yoeBefore, 100)), 306);
  const january = add(add(mul(eraBefore, 146_097), doeJanuary), -719_468);
  const dayOfYear = add(sub(days, january), 1);
  return { year, month, day, dayOfWeek, dayOfYear, hour, minute };
}

/** Column `i` of a datetime group as its features, in transformDatetime's order. */
export function datetimeFeatures(
  b: Nodes,
  seconds: string,
  parts: DatetimePart[],
  fitted: FittedDatetime,
  i: number,
): string[] {
  const calendar = calendarParts(b, seconds);
  return parts.flatMap((part) => {
    if (part === 'year') {
      const { shift, divide } = fitted.year as NonNullable<FittedDatetime['year']>;
      const centered = b.op('Sub', [calendar.year, b.constant([shift[i]], DOUBLE, [])]);
      return [b.op('Div', [centered, b.constant([divide[i]], DOUBLE, [])])];
    }
    const { period, start } = CYCLES[part];
    const angle = b.op('Mul', [
      b.op('Sub', [calendar[part], b.constant([start], DOUBLE, [])]),
      b.constant([(2 * Math.PI) / period], DOUBLE, []),
    ]);
    return [b.op('Sin', [angle]), b.op('Cos', [angle])];
  });
}

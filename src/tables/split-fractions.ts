// The fractions Dataset.split and Table.split take: one of train and
// validation, the other its complement.
import { firebrandError } from '../errors';
import { refuseUnknownKeys } from '../options/option-keys';

/** Which fraction of the samples goes to which part of a split: give one of train and validation. */
export type SplitFractions = ({ train: number; validation?: undefined } | { validation: number; train?: undefined }) & {
  seed?: number;
};

/** [train, validation] fractions; the one not given is its complement as written in decimals (0.2 for 0.8). */
export function splitFractions(parts: SplitFractions | number): [number, number] {
  if (typeof parts === 'number') {
    // The old form gave the bare number to validation, which read as the training share (split(0.8)).
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `split(${parts}): say which part the fraction is for: split({ train: ${parts} }) or split({ validation: ${parts} }) ` +
        '(a bare number went to validation before)',
    );
  }
  refuseUnknownKeys(parts, ['train', 'validation', 'seed', 'stratify', 'groups'], 'split options');
  const { train, validation } = parts ?? {};
  if ((train === undefined) === (validation === undefined)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'split: give exactly one of { train } and { validation }, a fraction between 0 and 1',
    );
  }
  const [name, fraction] = validation === undefined ? ['train', train] : ['validation', validation];
  if (typeof fraction !== 'number' || !(fraction > 0 && fraction < 1)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `split: ${name} must be a fraction between 0 and 1 (exclusive), got ${String(fraction)}`,
    );
  }
  const complement = (fraction: number) => Number((1 - fraction).toFixed(12));
  return validation === undefined
    ? [train as number, complement(train as number)]
    : [complement(validation), validation];
}

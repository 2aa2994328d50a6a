// SFT rows packed several to a sequence, as TRL's packing (strategy 'bfd': best-fit decreasing) packs
// them: the longest rows first, each into the sequence with the least room that still fits it. Each row's
// position_ids start at 0, which is how a packed model (fromPretrained's positionIds) tells rows apart, as
// transformers' find_packed_sequence_indices does; the room left at a sequence's end is padding with
// positions of its own and no target.
import type { TensorFields } from '../native';

/** The target of a position the loss leaves out (PyTorch's ignore_index). */
export const IGNORED = -100;

/** A row's ids and next-token targets, at most maxLength of each. */
export interface SftTokens {
  ids: number[];
  targets: number[];
}

/** `rows` in sequences of `length` tokens: input_ids (and input), position_ids and target. */
export function packedFields(rows: SftTokens[], length: number, pad: number): TensorFields {
  const bins: { rows: SftTokens[]; room: number }[] = [];
  for (const row of [...rows].sort((a, b) => b.ids.length - a.ids.length)) {
    let best: { rows: SftTokens[]; room: number } | undefined;
    for (const bin of bins) if (bin.room >= row.ids.length && (best === undefined || bin.room < best.room)) best = bin;
    if (best === undefined) bins.push((best = { rows: [], room: length }));
    best.rows.push(row);
    best.room -= row.ids.length;
  }
  const ids = new Int32Array(bins.length * length).fill(pad);
  const positions = new Int32Array(bins.length * length);
  const targets = new Int32Array(bins.length * length).fill(IGNORED);
  bins.forEach((bin, i) => {
    let at = i * length;
    for (const row of bin.rows) {
      ids.set(row.ids, at);
      targets.set(row.targets, at);
      for (let t = 0; t < row.ids.length; t++) positions[at + t] = t;
      at += row.ids.length;
    }
    // The padding after the last row counts as a row of its own, from position 0.
    for (let t = 0; at < (i + 1) * length; t++, at++) positions[at] = t;
  });
  const shape = [bins.length, length];
  return {
    input: { data: ids, shape },
    input_ids: { data: ids, shape },
    position_ids: { data: positions, shape },
    target: { data: targets, shape },
  };
}

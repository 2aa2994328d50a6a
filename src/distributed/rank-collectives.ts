// Collectives over a run's ranks: those the TypeScript side of a fit needs
// (flags agreed over the ranks, writes that rank 0 does while the others wait,
// the start point, failures posted) and torch.distributed's for user code
// (barrier, allReduce, allGather, broadcast), all made of one native sum over
// the ranks in float64, each rank writing its own slots. Without a place (one
// process) each is the process's own. They run between a fit's steps or
// outside fit: the trainer's thread runs one operation at a time.
import { firebrandError } from '../errors';
import type { NativeEngine, TensorData } from '../native';
import type { DistributedPlace } from './torchrun-environment';

/** What the public collectives take: numbers, or a tensor's data with its shape. */
export type CollectiveValues = number[] | TensorData<Float32Array | Float64Array>;

export class RankCollectives {
  /** @internal */
  constructor(
    private readonly place: DistributedPlace | undefined,
    private readonly engine: () => NativeEngine,
  ) {}

  /** Whether this is rank 0 (or the only process): where to write files and print once. */
  get isMainProcess(): boolean {
    return (this.place?.rank ?? 0) === 0;
  }

  /** Waits until every rank has called it (torch.distributed.barrier). */
  async barrier(): Promise<void> {
    if (this.place !== undefined) await this.engine().sumOverRanks([0], 'a barrier');
  }

  /** The values reduced elementwise over the ranks: 'sum' (default), 'mean', 'max' or 'min'; every rank gets them. */
  async allReduce<Values extends CollectiveValues>(
    values: Values,
    op: 'sum' | 'mean' | 'max' | 'min' = 'sum',
  ): Promise<Values> {
    if (!['sum', 'mean', 'max', 'min'].includes(op)) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `allReduce: op must be 'sum', 'mean', 'max' or 'min', got ${JSON.stringify(op)}`,
      );
    }
    const own = numbersOf(values, 'allReduce');
    if (this.place === undefined) return values;
    let reduced: number[];
    if (op === 'sum' || op === 'mean') {
      const sums = await this.engine().sumOverRanks(own, 'allReduce');
      reduced = op === 'sum' ? sums : sums.map((sum) => sum / (this.place as DistributedPlace).worldSize);
    } else {
      const all = await this.gathered(own, 'allReduce');
      reduced = own.map((_, i) => (op === 'max' ? Math.max : Math.min)(...all.map((rank) => rank[i])));
    }
    return shaped(values, reduced) as Values;
  }

  /** Every rank's values, by rank (torch.distributed.all_gather); each rank must give as many. */
  async allGather<Values extends CollectiveValues>(values: Values): Promise<Values[]> {
    const own = numbersOf(values, 'allGather');
    if (this.place === undefined) return [values];
    return (await this.gathered(own, 'allGather')).map((rank) => shaped(values, rank) as Values);
  }

  /** Rank `source`'s values on every rank (torch.distributed.broadcast); each rank must give as many. */
  async broadcast<Values extends CollectiveValues>(values: Values, source = 0): Promise<Values> {
    const own = numbersOf(values, 'broadcast');
    if (this.place === undefined) return values;
    if (!Number.isInteger(source) || source < 0 || source >= this.place.worldSize) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `broadcast: source must be a rank in [0, ${this.place.worldSize}), got ${source}`,
      );
    }
    return shaped(values, (await this.gathered(own, 'broadcast'))[source]) as Values;
  }

  /** Each rank's numbers, by rank: their lengths agreed first, then one sum of every rank's slots. */
  private async gathered(own: number[], what: string): Promise<number[][]> {
    const { rank, worldSize } = this.place as DistributedPlace;
    const lengths = new Array<number>(worldSize).fill(0);
    lengths[rank] = own.length;
    const given = await this.engine().sumOverRanks(lengths, `${what}'s lengths`);
    if (given.some((length) => length !== own.length)) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `${what}: every rank must give as many values; the ranks gave ${given.map((length, r) => `${length} (rank ${r})`).join(', ')}`,
      );
    }
    const slots = new Array<number>(worldSize * own.length).fill(0);
    own.forEach((value, i) => (slots[rank * own.length + i] = value));
    const all = await this.engine().sumOverRanks(slots, what);
    return Array.from({ length: worldSize }, (_, r) => all.slice(r * own.length, (r + 1) * own.length));
  }

  /**
   * @internal Whether any rank's flag is set (each flag separately); the flags themselves when not distributed.
   * Every rank must call it at the same point: it is a collective.
   */
  async anyRank(flags: boolean[], what: string): Promise<boolean[]> {
    if (this.place === undefined) return flags;
    const sums = await this.engine().sumOverRanks(flags.map(Number), what);
    return sums.map((sum) => sum > 0);
  }

  /**
   * @internal Makes sure every rank starts a fit at the same point: each says where it would resume (a checkpoint's
   * step and a digest of its state, none for a fresh start, or that it failed to tell), and all fail
   * together, naming each rank's point, unless they agree. A checkpoint only some ranks can see (a volume
   * per pod) would otherwise train the ranks out of step. Every rank must call it at the same point.
   */
  async agreeOnStart(point: { step: number; digest: number } | undefined, failed: boolean): Promise<void> {
    if (this.place === undefined) return;
    const { rank, worldSize } = this.place;
    // Rank r writes slots r (step + 1; 0: fresh; -1: failed) and worldSize + r (the digest): a sum gathers all.
    const mine = new Array<number>(2 * worldSize).fill(0);
    mine[rank] = failed ? -1 : point === undefined ? 0 : point.step + 1;
    mine[worldSize + rank] = point?.digest ?? 0;
    const all = await this.engine().sumOverRanks(mine, 'the resume points');
    const steps = all.slice(0, worldSize);
    const digests = all.slice(worldSize);
    const failing = steps.flatMap((step, r) => (step === -1 ? [r] : []));
    if (failed) return;
    if (failing.length > 0) {
      throw firebrandError(
        'ERR_FIREBRAND_DISTRIBUTED',
        `distributed: rank ${failing.join(', ')} could not tell where to resume (see its output); every rank stops`,
      );
    }
    if (steps.every((step) => step === steps[0]) && digests.every((digest) => digest === digests[0])) return;
    const said = steps.map((step, r) =>
      step === 0 ? `rank ${r} starts afresh` : `rank ${r} resumes at step ${step - 1} (digest ${digests[r]})`,
    );
    throw firebrandError(
      'ERR_FIREBRAND_DISTRIBUTED',
      `distributed: the ranks would start from different points: ${said.join('; ')}. Every rank must see the ` +
        'same checkpoints (an outputDir on a volume all ranks share, or the same resumeFromCheckpoint folder)',
    );
  }

  /**
   * @internal A failure of this rank's own (not a collective's, which the others see themselves) posted for the other
   * ranks, so that those waiting on it stop at once, naming it, instead of at the timeout.
   */
  async tellOthersOf(error: unknown): Promise<void> {
    const { code, message } = error as { code?: string; message?: string };
    if (this.place === undefined || this.place.worldSize <= 1 || code === 'ERR_FIREBRAND_DISTRIBUTED') return;
    let engine: NativeEngine;
    try {
      engine = this.engine();
    } catch {
      return; // failed before the engine (and the group) were made: the others fail at the rendezvous
    }
    await engine.postFailure(`${code ?? 'Error'}: ${message ?? String(error)}`).catch(() => undefined);
  }

  /**
   * @internal Runs `write` on rank 0 only (checkpoints, saved models); every rank waits until it is done, and
   * fails if it failed. Every rank must call it at the same point.
   */
  async onRankZero<Result>(what: string, write: () => Promise<Result>): Promise<Result | undefined> {
    if (this.place === undefined) return write();
    let result: Result | undefined;
    let failure: unknown;
    if (this.place.rank === 0) {
      try {
        result = await write();
      } catch (error) {
        failure = error;
      }
    }
    const [failed] = await this.anyRank([failure !== undefined], what);
    if (failure !== undefined) throw failure;
    if (failed)
      throw firebrandError('ERR_FIREBRAND_DISTRIBUTED', `distributed: rank 0 failed to write ${what}; see its output`);
    return result;
  }
}

/** The numbers of `values` (a list, or a float tensor's data), checked. */
function numbersOf(values: CollectiveValues, what: string): number[] {
  const numbers = Array.isArray(values)
    ? values
    : ArrayBuffer.isView(values?.data)
      ? Array.from(values.data)
      : undefined;
  if (numbers === undefined || !numbers.every((value) => typeof value === 'number')) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${what}: expected numbers, or { data: Float32Array | Float64Array, shape }`,
    );
  }
  return numbers;
}

/** `numbers` in the form of `like`: a list, or a tensor of its dtype and shape. */
function shaped(like: CollectiveValues, numbers: number[]): CollectiveValues {
  if (Array.isArray(like)) return numbers;
  const Kind = like.data instanceof Float64Array ? Float64Array : Float32Array;
  return { data: Kind.from(numbers), shape: [...like.shape] };
}

// The collectives the TypeScript side of a fit needs: flags agreed over the
// ranks (stops, saves) and writes that rank 0 does while the others wait.
// Without a place (one process) each is the process's own.
import { firebrandError } from '../errors';
import type { NativeEngine } from '../native';
import type { DistributedPlace } from './torchrun-environment';

export class RankCollectives {
  constructor(
    private readonly place: DistributedPlace | undefined,
    private readonly engine: () => NativeEngine,
  ) {}

  /**
   * Whether any rank's flag is set (each flag separately); the flags themselves when not distributed.
   * Every rank must call it at the same point: it is a collective.
   */
  async anyRank(flags: boolean[], what: string): Promise<boolean[]> {
    if (this.place === undefined) return flags;
    const sums = await this.engine().sumOverRanks(flags.map(Number), what);
    return sums.map((sum) => sum > 0);
  }

  /**
   * Makes sure every rank starts a fit at the same point: each says where it would resume (a checkpoint's
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
   * A failure of this rank's own (not a collective's, which the others see themselves) posted for the other
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
   * Runs `write` on rank 0 only (checkpoints, saved models); every rank waits until it is done, and
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

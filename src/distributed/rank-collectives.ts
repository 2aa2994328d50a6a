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

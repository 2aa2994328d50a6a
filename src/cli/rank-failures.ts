// Which rank a failed launch blames, as torchrun's agent picks its root cause:
// the first to exit is often a victim (its collective failed because a peer
// stopped answering). A rank stopped by a signal (SIGSTOP, a debugger) and
// still alive is the cause; else the earliest error a rank wrote to its
// TORCHELASTIC_ERROR_FILE that is its own (not ERR_FIREBRAND_DISTRIBUTED);
// else the first rank to exit.
import fs from 'node:fs';

/** A rank's process as the launcher sees it when the first one fails. */
export interface RankProcess {
  rank: number;
  pid: number | undefined;
  done: boolean;
  /** Its TORCHELASTIC_ERROR_FILE. */
  errorFile: string;
}

/** Whether process `pid` is stopped (state T or t in /proc: SIGSTOP, SIGTSTP, a tracer). */
export function isStopped(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the command name's closing parenthesis.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'T' || state === 't';
  } catch {
    return false;
  }
}

/** The ranks still running but stopped, when the first rank fails: they hang the others. */
export function stoppedRanks(ranks: RankProcess[]): number[] {
  return ranks.filter((entry) => !entry.done && isStopped(entry.pid)).map((entry) => entry.rank);
}

/** The earliest error a rank recorded that is its own (not a collective's that a peer caused). */
export function rootCause(ranks: RankProcess[]): string | undefined {
  const recorded = ranks.flatMap((entry) => {
    try {
      const { message } = JSON.parse(fs.readFileSync(entry.errorFile, 'utf8')) as {
        message: { message: string; extraInfo?: { timestamp?: string } };
      };
      return [{ rank: entry.rank, text: message.message, time: Number(message.extraInfo?.timestamp ?? Infinity) }];
    } catch {
      return [];
    }
  });
  const own = recorded.filter((entry) => !entry.text.startsWith('ERR_FIREBRAND_DISTRIBUTED'));
  const [first] = own.sort((a, b) => a.time - b.time || a.rank - b.rank);
  return first && `rank ${first.rank} failed first: ${first.text}`;
}

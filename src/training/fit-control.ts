// What callbacks, signals and the trainer's methods ask of a running fit
// (stop, save), and what one fit leaves for the next.
import { firebrandError } from '../errors';

export class FitControl {
  /** Training ends at the next optimizer step boundary. */
  stopRequested = false;
  /** Why, as the first caller of trainer.stop said. */
  stopReason: string | undefined;
  /** A checkpoint is due at the next step boundary (trainer.requestSave). */
  saveRequested = false;
  /** config.initWeightsFrom is loaded once, by the first fit that does not resume. */
  weightsInitialised = false;

  /** A new fit starts with no requests. */
  clearRequests(): void {
    this.stopRequested = false;
    this.stopReason = undefined;
    this.saveRequested = false;
  }

  /** trainer.shouldStop = false: the stop asked for is taken back. */
  clearStop(): void {
    this.stopRequested = false;
    this.stopReason = undefined;
  }

  /**
   * trainer.requestSave: a checkpoint into `outputDir` at the next step boundary of the `running` fit;
   * one that can pause mid-epoch is stopped there (`stopEpoch`) to write it.
   */
  requestSave(outputDir: string | undefined, running: { resumable: boolean } | undefined, stopEpoch: () => void): void {
    if (outputDir === undefined) {
      throw firebrandError('ERR_FIREBRAND_INVALID_STATE', 'requestSave: checkpoints need config.outputDir');
    }
    if (running === undefined) {
      throw firebrandError('ERR_FIREBRAND_INVALID_STATE', 'requestSave: only during fit (from a callback)');
    }
    this.saveRequested = true;
    if (running.resumable) stopEpoch();
  }

  stop(reason: string): void {
    this.stopRequested = true;
    this.stopReason ??= reason;
  }
}

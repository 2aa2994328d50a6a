// What callbacks, signals and the trainer's methods ask of a running fit
// (stop, save), and what one fit leaves for the next.
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

  stop(reason: string): void {
    this.stopRequested = true;
    this.stopReason ??= reason;
  }
}

// A long fit in a child process (node dist/test/support/interrupt-child.js <outputDir> [slowStop]) for the
// interruption tests: prints {"step": n} at each optimizer step and {"history": ...} when fit resolves.
// With slowStop, the last epoch's onEpochEnd waits 20 s, so a second signal can arrive during it.
import { resumeData, resumeTrainer } from './resume-run';

async function main(): Promise<void> {
  const [outputDir, slowStop] = process.argv.slice(2);
  const trainer = resumeTrainer({ outputDir, numEpochs: 1000 }, [
    { onLog: (logs) => process.stdout.write(`${JSON.stringify({ step: logs.globalStep })}\n`) },
    {
      postEpoch: async (_epoch, _logs, self) => {
        if (slowStop && self.shouldStop) {
          process.stdout.write(`${JSON.stringify({ stopping: true })}\n`);
          await new Promise((resolve) => setTimeout(resolve, 20_000));
        }
      },
    },
  ]);
  // Epochs of 1250 steps: a signal lands mid-epoch.
  const history = await trainer.fit(resumeData(20_000));
  process.stdout.write(`${JSON.stringify({ history: { stopped: history.stopped, epochs: history.epochs.length } })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});

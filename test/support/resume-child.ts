// Runs the checkpoint tests' job in a child process (node dist/test/support/resume-child.js <outputDir>):
// prints {"step": n} at each optimizer step, so the test can SIGKILL it mid-run,
// and {"weights": ...} at the end. Resumes from outputDir's latest checkpoint when there is one.
import { resumeData, resumeTrainer } from './resume-run';

async function main(): Promise<void> {
  const outputDir = process.argv[2];
  const trainer = resumeTrainer({ outputDir, saveEvery: 4, resumeFromCheckpoint: true }, [
    { onLog: (logs) => process.stdout.write(`${JSON.stringify({ step: logs.globalStep })}\n`) },
  ]);
  await trainer.fit(resumeData());
  const weights = Object.fromEntries(
    Object.entries(await trainer.stateDict()).map(([name, tensor]) => [name, Array.from(tensor.data as Float32Array)]),
  );
  process.stdout.write(`${JSON.stringify({ weights })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});

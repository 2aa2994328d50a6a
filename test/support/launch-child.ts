// A rank started by `firebrand launch` in test/launch.test.ts: prints its torchrun
// environment; with 'fail-rank-1', rank 1 fails and the others wait to be stopped.
const keys = ['RANK', 'LOCAL_RANK', 'GROUP_RANK', 'WORLD_SIZE', 'LOCAL_WORLD_SIZE', 'MASTER_ADDR', 'MASTER_PORT'];
process.stdout.write(`${JSON.stringify(Object.fromEntries(keys.map((key) => [key, process.env[key]])))}\n`);
process.stderr.write(`hello from ${process.env.RANK}\n`);
if (process.argv[2] === 'fail-rank-1') {
  if (process.env.RANK === '1') setTimeout(() => process.exit(3), 200);
  else setTimeout(() => undefined, 60_000);
}
// 'fail-first-attempt': rank 1 fails on the first start only (TORCHELASTIC_RESTART_COUNT 0), so a
// launch with --max-restarts succeeds on the second.
if (process.argv[2] === 'fail-first-attempt') {
  process.stderr.write(`attempt ${process.env.TORCHELASTIC_RESTART_COUNT} of rank ${process.env.RANK}\n`);
  if (process.env.RANK === '1' && process.env.TORCHELASTIC_RESTART_COUNT === '0')
    setTimeout(() => process.exit(4), 100);
}

// Root hooks for the whole suite. Mocha can stop without reporting and with
// exit code 0 when an assertion's diff cannot be printed (a BigInt64Array
// mismatch does it); a suite that ends before its last hook must fail CI.
let finished = false;

export const mochaHooks = {
  afterAll(): void {
    finished = true;
  },
};

process.on('exit', () => {
  if (!finished) {
    console.error('mocha stopped before the suite finished: a test ended the process early (see the last test above)');
    process.exitCode = 1;
  }
});

// A failed fit's root cause for torchrun: the JSON error file its agent names in
// TORCHELASTIC_ERROR_FILE, in the format torch.distributed.elastic's
// ErrorHandler.record_exception writes, so that torchrun's failure summary shows
// firebrand's message instead of "error_file: <N/A>".
import fs from 'node:fs';

/** Writes `error` to TORCHELASTIC_ERROR_FILE when torchrun set it; a write that fails changes nothing. */
export function recordElasticError(error: unknown, env: NodeJS.ProcessEnv = process.env): void {
  const file = env.TORCHELASTIC_ERROR_FILE;
  if (file === undefined || file === '') return;
  const failure = error instanceof Error ? error : new Error(String(error));
  const kind = (failure as { code?: unknown }).code ?? failure.name;
  const data = {
    message: {
      message: `${String(kind)}: ${failure.message}`,
      extraInfo: { py_callstack: failure.stack ?? failure.message, timestamp: String(Math.floor(Date.now() / 1000)) },
    },
  };
  try {
    fs.writeFileSync(file, JSON.stringify(data));
  } catch {
    // The error being reported is what matters; torchrun then shows the exit code alone, as without a file.
  }
}

// The callbacks a config turns on, after the user's: a Timer for maxTime,
// the loggers' feed, and the progress bar.
import type { Logger } from '../logging/logger';
import { LoggingCallback } from '../logging/logging-callback';
import { ProgressBar } from '../progress/progress-bar';
import type { Callback } from '../training/callbacks';
import type { ResolvedConfig } from '../training/config';
import { Timer } from './timer';

export function builtInCallbacks(config: ResolvedConfig, loggers: readonly Logger[]): Callback[] {
  return [
    ...(config.maxTime === undefined ? [] : [new Timer({ duration: config.maxTime })]),
    ...(loggers.length > 0 ? [new LoggingCallback(loggers)] : []),
    ...(config.progressBar ? [new ProgressBar()] : []),
  ];
}

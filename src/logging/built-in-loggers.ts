// config.loggers as logger objects, writing under outputDir/logs/version_N.
import path from 'node:path';

import { firebrandError } from '../errors';
import type { TrainerConfig } from '../training/config';
import { CsvLogger } from './csv-logger';
import { JsonLinesLogger } from './jsonl-logger';
import { claimLogVersion } from './log-versions';
import type { Logger } from './logger';
import { TensorBoardLogger } from './tensorboard/tensorboard-logger';

export function builtInLoggers(config: TrainerConfig): Logger[] {
  if (config.loggers.length === 0) return [];
  if (config.outputDir === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `config.loggers: ${config.loggers.join(', ')} write under config.outputDir, which is not set`,
    );
  }
  const logs = claimLogVersion(config.outputDir);
  const make = {
    csv: () => new CsvLogger(path.join(logs, 'metrics.csv')),
    jsonl: () => new JsonLinesLogger(path.join(logs, 'metrics.jsonl')),
    tensorboard: () => new TensorBoardLogger(path.join(logs, 'tensorboard')),
  };
  return config.loggers.map((name) => make[name]());
}

// firebrand's version, from its package.json (recorded in checkpoints).
import fs from 'node:fs';
import path from 'node:path';

const packageJson = path.resolve(__dirname, '..', '..', 'package.json');

export const LIBRARY_VERSION: string = (JSON.parse(fs.readFileSync(packageJson, 'utf8')) as { version: string })
  .version;

// A subcommand's arguments: positionals, and flags given as `--flag value` or
// `--flag=value`, each set by its entry in the command's table.
import { didYouMean } from '../options/closest-match';
import { UsageError } from './usage-error';

/** What a flag sets on `command`; `value()` takes the flag's value (the next argument, or after '='). */
export type FlagSetters<Command> = Record<string, (command: Command, value: () => string, flag: string) => void>;

/** An integer flag's value, at least `min`. */
export function integerFlag(flag: string, text: string | undefined, min: number): number {
  const value = Number(text);
  if (text === undefined || !Number.isInteger(value) || value < min) {
    throw new UsageError(`${flag}: expected an integer >= ${min}, got ${text ?? 'nothing'}`);
  }
  return value;
}

/** Applies `args` to `command`; false when they ask for --help. */
export function parseFlags<Command>(
  name: string,
  args: string[],
  command: Command,
  flags: FlagSetters<Command>,
  positional: (argument: string) => void,
): boolean {
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].split(/=(.*)/s, 2);
    const value = () => {
      const given = inline ?? args[++i];
      if (given === undefined || given === '') throw new UsageError(`${flag}: expected a value`);
      return given;
    };
    if (flag === '--help' || flag === '-h') return false;
    if (!flag.startsWith('-')) {
      positional(flag);
      continue;
    }
    if (!Object.hasOwn(flags, flag)) {
      throw new UsageError(`${name}: unknown option ${flag}${didYouMean(flag, Object.keys(flags))}`);
    }
    flags[flag](command, value, flag);
  }
  return true;
}

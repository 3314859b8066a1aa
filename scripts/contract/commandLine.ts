// The contract commands' arguments: one parser for all of them, so that an unknown option, a missing or empty
// value, or a stray argument is the command's usage line and exit 2 (input it cannot use), never a stack trace
// and never exit 1, which for `breaking` means "a breaking change".
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConstructRefusedError } from '../../lib/constructs/refusals.js';
import { ContractInputError } from '../../lib/contract/load.js';

export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

/** The options' values; a UsageError for anything else on the line, or an option given as ''. */
export function parseOptions<T extends Options>(args: string[], options: T) {
  const values = strictly(args, options);
  for (const [name, value] of Object.entries(values))
    for (const one of [value].flat())
      if (typeof one === 'string' && one.trim() === '') throw new UsageError(`--${name} is empty`);
  return values;
}

function strictly<T extends Options>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    // Node's text goes on to explain `--` to a user who meant a positional; the first sentence is the reason.
    throw new UsageError((error as Error).message.split(/\.\s/)[0] ?? 'bad arguments');
  }
}

export interface Output {
  out: (text: string) => void;
  err: (text: string) => void;
}

/**
 * Runs a command's body (`end`: what the caller's `io` does not add after a message): its exit code, or 2 with one line on stderr for input it cannot use (with the usage
 * line after a usage error), or 2 with generate's report for a spec using a construct the commands refuse
 * (lib/contract/readable.ts). Any other error is a bug and is thrown.
 */
export function runCommand(name: string, usage: string, io: Output, body: () => number, end = '\n'): number {
  try {
    return body();
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`contract ${name}: ${error.message}\nusage: ${usage}${end}`);
      return 2;
    }
    if (error instanceof ContractInputError || error instanceof ConstructRefusedError) {
      io.err(`contract ${name}: ${error.message}${end}`);
      return 2;
    }
    throw error;
  }
}

/** The process's own streams; `end` is what each write is followed by. */
export const processOutput = (end = '\n'): Output => ({
  out: (text) => process.stdout.write(`${text}${end}`),
  err: (text) => process.stderr.write(`${text}${end}`),
});

/** The day the diff judges sunsets against: `--date YYYY-MM-DD` (a real calendar day), else today in UTC. */
export function dayOf(option: string | undefined, now = new Date()): string {
  if (option === undefined) return now.toISOString().slice(0, 10);
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(option);
  const day = match ? new Date(`${option}T00:00:00Z`) : undefined;
  if (!day || Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== option)
    throw new UsageError(`--date ${option} is not a day (YYYY-MM-DD)`);
  return option;
}

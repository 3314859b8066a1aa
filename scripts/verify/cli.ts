/**
 * npm run verify -- --base-url <https://host/v1> --api-key <key> [--read-only] [--max-requests N] [--junit FILE] [--seed N]
 *
 * Checks a running deployment against this checkout's openapi.yaml from
 * outside: its published contract, then generated valid and invalid requests
 * for every operation, paging, ETags and (without --read-only) idempotent
 * creates. Exit code 0 only when nothing failed. See docs/deploying.md.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isMainModule } from '../../src/entryPoint.js';
import { junitReport, textReport } from './report.js';
import { runVerification, type VerifyOptions } from './verify.js';

// Enough for every operation's valid and invalid requests, and few enough
// (at one request at a time) to finish in seconds after a deploy.
const defaultMaxRequests = 500;

const usage =
  'usage: npm run verify -- --base-url <https://host/v1> --api-key <key> [--read-only] [--max-requests N] [--junit FILE] [--seed N]\n' +
  '  (--api-key may be left out when API_KEY is set)';

export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: Record<string, string | undefined>;
  /** Tests only: the clock and the waiting of the run. */
  overrides?: Pick<VerifyOptions, 'now' | 'wait'>;
}

function parse(argv: string[], env: CliIo['env']): VerifyOptions & { junit?: string } {
  const { values } = parseArgs({
    args: argv,
    options: {
      'base-url': { type: 'string' },
      'api-key': { type: 'string' },
      'read-only': { type: 'boolean', default: false },
      'max-requests': { type: 'string' },
      junit: { type: 'string' },
      seed: { type: 'string' },
    },
  });
  const baseUrl = values['base-url'];
  const apiKey = values['api-key'] ?? env['API_KEY'];
  if (baseUrl === undefined || !/^https?:\/\//.test(baseUrl))
    throw new Error('--base-url must be an http(s) URL ending in the API base path, e.g. https://host/v1');
  if (apiKey === undefined || apiKey === '') throw new Error('--api-key (or API_KEY) is required');
  const maxRequests = Number(values['max-requests'] ?? defaultMaxRequests);
  if (!Number.isSafeInteger(maxRequests) || maxRequests < 1)
    throw new Error('--max-requests must be a positive integer');
  const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
  if (!Number.isSafeInteger(seed)) throw new Error('--seed must be an integer');
  return {
    baseUrl,
    apiKey,
    readOnly: values['read-only'],
    maxRequests,
    seed,
    ...(values.junit === undefined ? {} : { junit: values.junit }),
  };
}

/** The whole command; returns the exit code: 0 when nothing failed, 1 on a failure, 2 on a usage error. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let options: ReturnType<typeof parse>;
  try {
    options = parse(argv, io.env);
  } catch (error) {
    io.err(`${(error as Error).message}\n${usage}\n`);
    return 2;
  }
  io.out(
    `verifying ${options.baseUrl} against openapi.yaml (${options.readOnly ? 'read-only' : 'write mode'}, at most ${options.maxRequests} requests, seed ${options.seed})\n`,
  );
  let findings: Awaited<ReturnType<typeof runVerification>>;
  try {
    findings = await runVerification({ ...options, ...io.overrides });
  } catch (error) {
    // A deployment that cannot be reached, or stops answering, fails the run with what the network said.
    const cause = (error as Error & { cause?: Error }).cause;
    io.err(`verification stopped: ${(error as Error).message}${cause ? ` (${cause.message})` : ''}
`);
    return 1;
  }
  io.out(textReport(findings, { readOnly: options.readOnly }));
  if (options.junit !== undefined) writeFileSync(options.junit, junitReport(findings));
  return findings.passed ? 0 : 1;
}

if (isMainModule(import.meta.url))
  process.exitCode = await runCli(process.argv.slice(2), {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    env: process.env,
  });

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { promtoolBin } from '../../lib/instances/index.js';
import { repoRoot } from '../../lib/repoRoot.js';

/** Where the shipped rules and their promtool tests are; promtool runs there, as an operator would. */
export const rulesFolder = join(repoRoot, 'deploy/prometheus');

/**
 * The pages' tests (evaluated every minute, about two minutes of promtool):
 * run by the rules suite (test/rules/), the other shipped tests by npm test.
 */
export const pageTestFile = 'objectives-pages.test.yml';

export interface RuleTestFile {
  rule_files: string[];
  evaluation_interval?: string;
  tests: Array<{ name: string }>;
}

export const ruleTestFileOf = (path: string) => parse(readFileSync(path, 'utf8')) as RuleTestFile;

/**
 * Runs promtool in the rules' folder: its stdout and stderr together (output), and its stdout alone,
 * where `test rules` says which file it tests and SUCCESS (its failures go to stderr, interleaved).
 */
export function promtool(args: string[]): Promise<{ status: number | null; output: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(promtoolBin, args, { cwd: rulesFolder, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (status) => {
      resolve({ status, output, stdout });
    });
  });
}

/**
 * The report of each file of one `promtool test rules`, from its stdout: "Unit Testing:  <file>" then
 * SUCCESS, or nothing for a file that failed (FAILED and the details go to stderr, out of order).
 */
export function verdicts(output: string): Map<string, string> {
  const byFile = new Map<string, string>();
  for (const part of output.split(/^Unit Testing: +/m).slice(1)) {
    const [file, ...rest] = part.split('\n');
    byFile.set(file!.trim(), rest.join('\n'));
  }
  return byFile;
}

/**
 * `promtool test rules` on each file, as many at once as the machine has cores: promtool tests the files of
 * one call one after another, on one core. The rules suite's 33 files, each with three days of samples,
 * took 303 s in one call and 173 s this way on 2 cores (2026-12-03).
 * Each file's report, as `verdicts` reads it, and the output of the run that tested it.
 */
export async function testRulesEach(
  files: string[],
): Promise<Map<string, { report: string | undefined; output: string }>> {
  const results = new Map<string, { report: string | undefined; output: string }>();
  const queue = [...files];
  const worker = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      const run = await promtool(['test', 'rules', file]);
      results.set(file, { report: verdicts(run.stdout).get(file), output: run.output });
    }
  };
  await Promise.all(Array.from({ length: Math.min(availableParallelism(), files.length) }, worker));
  return results;
}

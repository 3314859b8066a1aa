/**
 * The slowest test files of the run that just ended, from tap's results (.tap/test-results/, one file per
 * test file, ending with "# time=N ms"). usage: tsx scripts/tests/slowest.ts SINCE_MS [COUNT]
 * Only results written since SINCE_MS (epoch milliseconds) count, so files of an earlier run are not named.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { repoRoot } from '../../lib/repoRoot.js';

const resultsFolder = join(repoRoot, '.tap/test-results');

function resultFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    return entry.isDirectory() ? resultFiles(path) : entry.name.endsWith('.tap') ? [path] : [];
  });
}

function main([since = '0', count = '5']: string[]): void {
  let files: string[];
  try {
    files = resultFiles(resultsFolder).filter((path) => statSync(path).mtimeMs >= Number(since));
  } catch {
    return;
  }
  const timed = files
    .map((path) => {
      const times = [...readFileSync(path, 'utf8').matchAll(/^# time=([\d.]+)ms$/gm)];
      const last = times.at(-1)?.[1];
      return {
        file: relative(resultsFolder, path).replace(/\.tap$/, ''),
        seconds: last === undefined ? NaN : Number(last) / 1000,
      };
    })
    .filter(({ seconds }) => Number.isFinite(seconds))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, Number(count));
  if (timed.length === 0) return;
  process.stdout.write(`# slowest test files of this run (wall time, with others running beside them):\n`);
  for (const { file, seconds } of timed) process.stdout.write(`#   ${seconds.toFixed(1).padStart(6)} s  ${file}\n`);
}

main(process.argv.slice(2));

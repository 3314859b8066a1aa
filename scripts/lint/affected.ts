/**
 * What ESLint must read again after the files given changed: those of them it lints, and every module
 * whose imports reach one, directly or through others (type-checked rules judge a file by the types it
 * imports, and import-x/no-cycle by the graph). Whatever reaches none of them keeps the verdict the
 * lint of the tree before gave.
 * usage: tsx scripts/lint/affected.ts FILE...   prints the files, one a line
 */
import { existsSync } from 'node:fs';
import { modulesReaching } from '../tests/importGraph.js';

/** The files ESLint lints (eslint.config.js; its ignores, src/generated among them, are its own to apply). */
const linted = /\.(ts|js|mjs)$/;

function main(changed: string[]): void {
  const present = changed.filter((file) => existsSync(file));
  const sources = present.filter((file) => linted.test(file) || file.endsWith('.json'));
  const reaching = sources.length === 0 ? [] : [...modulesReaching(sources)];
  const files = [...new Set([...present, ...reaching])].filter((file) => linted.test(file)).sort();
  process.stderr.write(`${files.length} files to lint: the ${changed.length} changed and what imports them\n`);
  process.stdout.write(files.map((file) => `${file}\n`).join(''));
}

main(process.argv.slice(2));

/**
 * npm run contract -- breaking [--base FILE] [--head FILE]
 *
 * Compares openapi.yaml with the last released contract (the highest version
 * under contract/released/) twice: with optic's breaking-change rules and with
 * our own (scripts/breaking/compare.ts), which catch narrowed bounds that
 * optic lets through. Fails on any breaking change unless the major number of
 * info.version moved.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { findBreakingChanges, majorOf, type JsonObject } from './breaking/compare.js';
import { repoRoot } from '../lib/repoRoot.js';
import { lastReleased } from './contract/released.js';

const load = (file: string) => parse(readFileSync(file, 'utf8')) as JsonObject;
const versionOf = (document: JsonObject) => String((document['info'] as JsonObject | undefined)?.['version']);

/** optic's verdict; its output goes straight to the terminal. */
function runOptic(base: string, head: string): boolean {
  const result = spawnSync(join(repoRoot, 'node_modules/.bin/optic'), ['diff', base, head, '--check'], {
    cwd: repoRoot,
    stdio: 'inherit',
    // optic would otherwise try to send usage data, and CI has no network.
    env: { ...process.env, OPTIC_TELEMETRY_LEVEL: 'off' },
  });
  if (result.error) throw result.error;
  return result.status === 0;
}

function main(): number {
  const { values } = parseArgs({ options: { base: { type: 'string' }, head: { type: 'string' } } });
  const base = values.base ?? lastReleased();
  const head = values.head ?? join(repoRoot, 'openapi.yaml');
  const before = load(base);
  const after = load(head);
  const majorMoved = majorOf(versionOf(after)) > majorOf(versionOf(before));
  console.log(
    `Comparing ${relative(repoRoot, head)} (${versionOf(after)}) with ${relative(repoRoot, base)} (${versionOf(before)})`,
  );

  console.log('\n== optic diff --check');
  const opticPassed = runOptic(base, head);

  console.log('\n== own checks (scripts/breaking/compare.ts)');
  const changes = findBreakingChanges(before, after);
  for (const change of changes) console.log(`  x ${change.where}: ${change.what}`);
  if (changes.length === 0) console.log('  no breaking change found');

  const breaking = !opticPassed || changes.length > 0;
  if (!breaking) {
    console.log('\nNo breaking change against the released contract.');
    return 0;
  }
  if (majorMoved) {
    console.log(
      `\nBreaking changes found, allowed: the major version moved (${versionOf(before)} -> ${versionOf(after)}).`,
    );
    return 0;
  }
  console.error(
    `\nBreaking change against the released contract ${versionOf(before)}. Undo it, or raise the major number of info.version ` +
      'in openapi.yaml (see docs/contract.md, "Cutting a release").',
  );
  return 1;
}

process.exitCode = main();

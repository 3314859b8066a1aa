/**
 * npm run contract -- changelog [--base FILE|REV] [--head FILE|REV] [--date YYYY-MM-DD]
 *
 * Prints in Markdown what changed between the last released contract (the
 * highest version under contract/released/) and openapi.yaml: the changelog's
 * view of the one diff (lib/contract/diff.ts), each entry with its rule id and level.
 * Exit 2, with one line on stderr, on input it cannot read or an option it does not know; with npm run
 * generate's report, on a head using a construct docs/constructs.md refuses (lib/contract/readable.ts).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { changes } from '../../lib/contract/changelog.js';
import { diff } from '../../lib/contract/diff.js';
import { loadContract } from '../../lib/contract/load.js';
import { baseNote, readableHead } from '../../lib/contract/readable.js';
import { lastReleased } from '../../lib/contract/released.js';
import { versionOf } from '../../lib/contract/verdict.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { dayOf, parseOptions, processOutput, runCommand, type Output } from './commandLine.js';

export const changelogUsage = 'npm run contract -- changelog [--base FILE|REV] [--head FILE|REV] [--date YYYY-MM-DD]';

export function runChangelog(args: string[], io: Output = processOutput('')): number {
  return runCommand('changelog', changelogUsage, io, () => {
    const values = parseOptions(args, { base: { type: 'string' }, head: { type: 'string' }, date: { type: 'string' } });
    const base = loadContract(values.base ?? lastReleased());
    const head = readableHead(loadContract(values.head ?? join(repoRoot, 'openapi.yaml')));
    const note = baseNote(base);
    if (note) io.err(note);
    const list = diff(base.document, head.document, { today: dayOf(values.date) });
    io.out(`## ${versionOf(head.document)}\n\n${changes(base.document, head.document, list)}`);
    io.err(`(compared ${head.source} with ${base.source})\n`);
    return 0;
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  process.exitCode = runChangelog(process.argv.slice(2));

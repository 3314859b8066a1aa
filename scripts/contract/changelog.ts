/**
 * npm run contract -- changelog [--base FILE|REV] [--head FILE|REV]
 *
 * Prints in Markdown what changed between the last released contract (the
 * highest version under contract/released/) and openapi.yaml: the changelog's
 * view of the one diff (lib/contract/diff.ts), each entry with its rule id and level.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { changelog } from '../../lib/contract/changelog.js';
import { ContractInputError, loadContract } from '../../lib/contract/load.js';
import { lastReleased } from '../../lib/contract/released.js';
import { repoRoot } from '../../lib/repoRoot.js';

try {
  const { values } = parseArgs({ options: { base: { type: 'string' }, head: { type: 'string' } } });
  const base = loadContract(values.base ?? lastReleased());
  const head = loadContract(values.head ?? join(repoRoot, 'openapi.yaml'));
  process.stdout.write(changelog(base.document, head.document));
  process.stderr.write(`(compared ${head.source} with ${base.source})\n`);
} catch (error) {
  if (!(error instanceof ContractInputError) && !(error instanceof TypeError)) throw error;
  process.stderr.write(`contract changelog: ${error.message}\n`);
  process.exitCode = 2;
}

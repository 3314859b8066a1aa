import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { git } from '../../lib/releases/record.js';
import { repoRoot } from '../../lib/repoRoot.js';

export interface MigrationChanges {
  /** migrations/<file> in this tree that the release does not have. */
  added: string[];
  /** Released migrations edited or removed here: each one a problem. */
  problems: string[];
}

/** The migrations of this tree against those of the release's commit. */
export function migrationChanges(commit: string, root = repoRoot): MigrationChanges {
  const dir = join(root, 'migrations');
  const here = existsSync(dir) ? readdirSync(dir).filter((file) => file.endsWith('.sql')) : [];
  const released = git(['ls-tree', '--name-only', `${commit}:migrations`], root)
    .split('\n')
    .filter((file) => file.endsWith('.sql'));
  const problems: string[] = [];
  for (const file of released) {
    if (!here.includes(file)) {
      problems.push(`migrations/${file} was released and is gone: a released migration stays as it was`);
      continue;
    }
    const before = git(['show', `${commit}:migrations/${file}`], root);
    if (before !== readFileSync(join(dir, file), 'utf8').trim())
      problems.push(
        `migrations/${file} differs from the released one: databases already ran it, so change the schema in a new migration`,
      );
  }
  return { added: here.filter((file) => !released.includes(file)).sort(), problems };
}

/**
 * The import graph of the repository, as dependency-cruiser reads it (type-only imports included,
 * .dependency-cruiser.json): which modules reach a file, directly or through others.
 */
import { execFileSync } from 'node:child_process';
import { join, relative } from 'node:path';
import { repoRoot } from '../../lib/repoRoot.js';

/** The folders whose modules the graph holds. */
export const graphFolders = ['test', 'src', 'lib', 'scripts', 'generators', 'bench', 'clients'];

const asPattern = (target: string) =>
  `^${relative(repoRoot, join(process.cwd(), target)).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;

/** Every module whose imports reach any of the targets (paths from the working directory), the targets among them. */
export function modulesReaching(targets: string[]): Set<string> {
  const output = execFileSync(
    join(repoRoot, 'node_modules/.bin/depcruise'),
    [
      ...graphFolders,
      '--config',
      '.dependency-cruiser.json',
      '--reaches',
      targets.map(asPattern).join('|'),
      '--output-type',
      'json',
    ],
    { cwd: repoRoot, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  return new Set((JSON.parse(output) as { modules: Array<{ source: string }> }).modules.map((module) => module.source));
}

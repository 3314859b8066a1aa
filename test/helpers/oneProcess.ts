import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { repoRoot } from '../../lib/repoRoot.js';

/** The test files a partial run chose (paths from the repository's root), or undefined: all. */
function chosenFiles(): Set<string> | undefined {
  const listed = process.env['PETS_TEST_FILES'];
  return listed === undefined ? undefined : new Set(listed.split(' ').filter(Boolean));
}

/**
 * Runs every *.test.ts file of a folder in this process, in name order. For
 * folders of small files on one harness: a process of its own costs a test
 * file about 1.2 s of CPU (node, tsx, tap), and 1-1.5 s more once it builds
 * the app on PGlite (fastify's modules, the WebAssembly compile), more than
 * most of these files spend on their tests (measured with /usr/bin/time, one
 * file at a time). Every file is found by name, so a new one runs without an
 * edit; each still runs alone with `npx tap <file>`.
 *
 * The files load inside a test of their own: each queues its tests on tap's
 * root test as it loads, and the root must not end (its queue empty) while a
 * file is still loading, or that file's tests could not start at all. So all
 * files load first, then their tests run in order, as in separate processes.
 */
export function runTestFilesOf(folder: URL): void {
  const path = fileURLToPath(folder);
  const chosen = chosenFiles();
  const names = readdirSync(path)
    .filter((name) => name.endsWith('.test.ts'))
    .filter((name) => chosen === undefined || chosen.has(relative(repoRoot, join(path, name))))
    .sort();
  void t.test(`load the ${names.length} test files of ${path}`, async (t) => {
    t.ok(names.length > 0, 'the folder has test files');
    for (const name of names) {
      await import(new URL(name, folder).href);
      t.pass(name);
    }
  });
}

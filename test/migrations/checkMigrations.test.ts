import { join } from 'node:path';
import t, { type Test } from 'tap';
import { existsSync, readdirSync } from 'node:fs';
import { postgresBin } from '../../lib/instances/postgres.js';
import { defaultCacheFolder } from '../../lib/releases/build.js';
import { previousRelease } from '../../lib/releases/record.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { copyOfRepo, type RepoCopy } from '../helpers/repoCopy.js';

/**
 * npm run check:migrations in a copy of this repository with one migration
 * committed on top: the previous release (contract/releases.json), built once
 * into this checkout's .run/releases/, must keep passing its own verify on the
 * new schema, and squawk must find no lock hazard.
 */

const release = previousRelease();
const skip =
  release === undefined
    ? 'no release recorded in contract/releases.json'
    : existsSync(join(postgresBin, 'initdb'))
      ? false
      : `no PostgreSQL 15 in ${postgresBin} for the private cluster`;

function check(copy: RepoCopy) {
  return copy.run(join(copy.root, 'node_modules', '.bin', 'tsx'), [
    'scripts/migrations/check.ts',
    '--cache',
    defaultCacheFolder,
  ]);
}

/** The file the next migration of this tree would be: its number follows the last one's. */
function nextMigration(name: string): string {
  const numbers = readdirSync(join(repoRoot, 'migrations')).map((file) => Number(file.slice(0, 4)) || 0);
  return `migrations/${String(Math.max(0, ...numbers) + 1).padStart(4, '0')}_${name}.sql`;
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function withCopy(t: Test): RepoCopy {
  const copy = copyOfRepo();
  t.teardown(copy.remove);
  return copy;
}

t.test('a migration renaming pets.name fails, naming the previous release checks that fail', { skip }, async (t) => {
  const copy = withCopy(t);
  const file = nextMigration('rename_pet_name');
  copy.commit(
    file,
    "SET LOCAL lock_timeout = '5s';\nALTER TABLE pets RENAME COLUMN name TO title;\n",
    'Rename pets.name',
  );
  const { status, output } = check(copy);
  t.comment(output);
  t.equal(status, 1, 'check:migrations fails');
  t.match(output, 'migrations added since the previous release 1.2.0', 'it compares with the recorded release');
  t.match(output, new RegExp(`${escaped(file)}:2 squawk rule renaming-column`), 'squawk names the rule');
  t.match(
    output,
    /x release \d+\.\d+\.\d+'s own check fails on the new schema: FAIL createPet/,
    "the release's own create check fails, by name",
  );
  t.match(
    output,
    /check:migrations failed: \d+ problem\(s\); how to write a migration that passes: docs\/deploying\.md/,
  );
});

t.test('an index built without CONCURRENTLY fails, naming the squawk rule', { skip }, async (t) => {
  const copy = withCopy(t);
  const file = nextMigration('index_pet_names');
  copy.commit(file, "SET LOCAL lock_timeout = '5s';\nCREATE INDEX pets_name_idx ON pets (name);\n", 'Index pet names');
  const { status, output } = check(copy);
  t.comment(output);
  t.equal(status, 1, 'check:migrations fails');
  t.match(output, new RegExp(`${escaped(file)}:2 squawk rule require-concurrent-index-creation`));
  t.notMatch(output, /own check fails/, 'the previous release still works on it: only the lock is refused');
});

t.test(
  'an additive migration passes; a reviewed exception is accepted by its squawk-ignore comment',
  { skip },
  async (t) => {
    const copy = withCopy(t);
    copy.commit(
      nextMigration('pet_nicknames'),
      [
        "SET LOCAL lock_timeout = '5s';",
        'ALTER TABLE pets ADD COLUMN nickname text;',
        '-- squawk-ignore require-concurrent-index-creation',
        'CREATE INDEX pets_nickname_idx ON pets (nickname);',
        '',
      ].join('\n'),
      'Pet nicknames',
    );
    const { status, output } = check(copy);
    t.comment(output);
    t.equal(status, 0, 'check:migrations passes');
    t.match(output, 'squawk: no lock hazard found');
    t.match(output, /release \d+\.\d+\.\d+'s verify: .*no contract violation found/);
  },
);

t.test('a released migration edited afterwards fails', { skip }, async (t) => {
  const copy = withCopy(t);
  copy.commit(
    'migrations/0001_create_pets.sql',
    `${copy.git('show', 'HEAD:migrations/0001_create_pets.sql')}\nCREATE INDEX pets_name_idx ON pets (name);\n`,
    'Edit a released migration',
  );
  const { status, output } = check(copy);
  t.equal(status, 1, output);
  t.match(output, 'migrations/0001_create_pets.sql differs from the released one');
});

import { chmodSync, chownSync, existsSync, lchownSync, mkdirSync, renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { runApiKey } from '../../src/cli/apikey.js';
import { assertTrustedPath } from '../../src/db/dataDirPath.js';
import { openDatabase } from '../../src/db/index.js';
import { startServer } from '../../src/process/startServer.js';
import { migratedDataDir } from '../helpers/databases.js';
import { runInProcess, textSink } from '../helpers/processes.js';
import { scratchDir } from '../helpers/scratchSpace.js';
import { otherUser } from './otherUser.js';

// DATA_DIR's path is checked as OpenSSH checks a key file's: every folder
// from / down and every link on the way must belong to us or root and be
// closed to others, except a root-owned sticky folder such as /tmp.

const other = otherUser();
const skip = 'skip' in other ? { skip: other.skip } : {};
const otherUid = 'skip' in other ? -1 : other.uid;

/** A scratch folder for the path, and a migrated database moved to where the test says. */
async function layout(t: Test): Promise<{ root: string; placeAt(path: string): void }> {
  const scratch = scratchDir();
  const database = await migratedDataDir();
  t.teardown(() => {
    scratch.remove();
    database.remove();
  });
  return {
    root: scratch.path,
    placeAt: (path) => {
      renameSync(database.path, path);
    },
  };
}

const opens = async (t: Test, dataDir: string, what: string) => {
  const db = await openDatabase({ dataDir });
  t.pass(what);
  await db.close();
};

const refused = (t: Test, dataDir: string, message: RegExp) =>
  t.rejects(openDatabase({ dataDir }), { name: 'DataDirAccessError', message });

const env = (dataDir: string) => ({ DATA_DIR: dataDir, PORT: '0', METRICS_PORT: 'off', LOG_LEVEL: 'silent' });

t.test('a parent folder owned by another user is refused by the server and the CLI, in one line', skip, async (t) => {
  const { root, placeAt } = await layout(t);
  const theirs = join(root, 'theirs');
  mkdirSync(theirs, { mode: 0o755 });
  const dataDir = join(theirs, 'data');
  placeAt(dataDir);
  chownSync(theirs, otherUid, otherUid);
  const why = `^${theirs}, on the path to ${dataDir}, is a folder owned by uid ${otherUid}, neither this user \\(uid 0\\) nor root`;
  // A server that starts after all is stopped, so a broken check fails the test instead of hanging it.
  const started = await startServer(env(dataDir), textSink().stream).then(
    (running) => running.shutdown('SIGINT'),
    (error: unknown) => error,
  );
  t.match(started, { name: 'StartupError', message: new RegExp(why) }, 'the server refuses to start');
  const cli = await runInProcess((streams) => runApiKey(['list'], { DATA_DIR: dataDir }, streams));
  t.equal(cli.code, 1, 'the CLI fails');
  t.match(cli.stderr, new RegExp(why), 'naming the folder and its owner');
  t.equal(cli.stderr.trim().split('\n').length, 1, 'in one line, no stack');

  const notMadeYet = join(theirs, 'new', 'data');
  await refused(t, notMadeYet, new RegExp(`^${theirs}, on the path`));
  t.notOk(existsSync(join(theirs, 'new')), 'refused before anything is made through it');

  chownSync(theirs, 0, 0);
  await opens(t, dataDir, 'opens once the folder is root’s');
});

t.test('a parent writable by others is refused, unless it is root’s with the sticky bit (/tmp)', async (t) => {
  const { root, placeAt } = await layout(t);
  const shared = join(root, 'shared');
  mkdirSync(shared);
  const dataDir = join(shared, 'data');
  placeAt(dataDir);
  for (const mode of [0o775, 0o757, 0o777]) {
    chmodSync(shared, mode);
    await refused(
      t,
      dataDir,
      new RegExp(
        `^${shared}, on the path to ${dataDir}, is writable by other users \\(owner uid 0, mode 0${mode.toString(8)}\\)`,
      ),
    );
  }
  chmodSync(shared, 0o1777);
  await opens(t, dataDir, 'a root-owned sticky folder is accepted as a parent');
  chmodSync(dataDir, 0o777);
  await refused(t, dataDir, new RegExp(`^${dataDir} is writable by other users \\(mode 0777\\)`));
});

t.test(
  'a link on the path is followed only if it is ours or root’s, and its target is checked too',
  skip,
  async (t) => {
    const { root, placeAt } = await layout(t);
    const real = join(root, 'real');
    mkdirSync(real, { mode: 0o700 });
    placeAt(join(real, 'data'));
    const via = join(root, 'via');
    symlinkSync(real, via);
    const dataDir = join(via, 'data');

    lchownSync(via, otherUid, otherUid);
    await refused(
      t,
      dataDir,
      new RegExp(`^${via}, on the path to ${dataDir}, is a symbolic link owned by uid ${otherUid}`),
    );
    lchownSync(via, 0, 0);
    await opens(t, dataDir, 'a link of ours is followed');

    chmodSync(real, 0o777);
    await refused(t, dataDir, new RegExp(`^${real}, on the path to ${dataDir}, is writable by other users`));
    chmodSync(real, 0o700);

    const direct = join(root, 'data-link');
    symlinkSync(join(real, 'data'), direct);
    lchownSync(direct, otherUid, otherUid);
    await refused(t, direct, new RegExp(`^${direct} is a symbolic link owned by uid ${otherUid}`));
    lchownSync(direct, 0, 0);
    await opens(t, direct, 'the data directory itself may be a link of ours');

    chownSync(join(real, 'data'), otherUid, otherUid);
    await refused(
      t,
      direct,
      new RegExp(`^${join(real, 'data')}, on the path to ${direct}, belongs to uid ${otherUid}`),
    );
    chownSync(join(real, 'data'), 0, 0);
  },
);

t.test('a loop of links is refused', async (t) => {
  const { root } = await layout(t);
  symlinkSync(join(root, 'b'), join(root, 'a'));
  symlinkSync(join(root, 'a'), join(root, 'b'));
  await refused(t, join(root, 'a', 'data'), /is reached through more than 40 symbolic links/);
});

t.test('for a user who is not root, root’s folders pass and only root’s sticky ones may be open', skip, async (t) => {
  const { root } = await layout(t);
  const home = join(root, 'home');
  mkdirSync(join(home, 'data'), { recursive: true, mode: 0o700 });
  chownSync(home, otherUid, otherUid);
  chownSync(join(home, 'data'), otherUid, otherUid);
  t.doesNotThrow(() => {
    assertTrustedPath(join(home, 'data'), otherUid, true);
  }, 'root’s parents and their own');
  t.throws(() => {
    assertTrustedPath(join(home, 'data'), otherUid + 1, true);
  }, /is a folder owned by uid/);

  chmodSync(home, 0o1777);
  t.throws(
    () => {
      assertTrustedPath(join(home, 'data'), otherUid, true);
    },
    new RegExp(`^${home}, on the path to .* is writable by other users \\(owner uid ${otherUid}, mode 1777\\)`),
    'their own sticky folder is not /tmp: only root’s is trusted',
  );
  chmodSync(home, 0o755);
  chownSync(join(home, 'data'), 0, 0);
  t.throws(
    () => {
      assertTrustedPath(join(home, 'data'), otherUid, true);
    },
    /belongs to uid 0, not to the user running the service/,
    'the data directory itself must be theirs, not root’s',
  );
});

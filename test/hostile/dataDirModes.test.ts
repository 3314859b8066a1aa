import { chmodSync, chownSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { openDatabase } from '../../src/db/index.js';
import { startServer } from '../../src/process/startServer.js';
import { migratedDataDir } from '../helpers/databases.js';
import { textSink } from '../helpers/processes.js';
import { scratchDir } from '../helpers/scratchSpace.js';
import { otherUser } from './otherUser.js';

/** Every path under folder (not following links) that is not owner-only: folders 0700, anything else 0600. */
function notOwnerOnly(folder: string): string[] {
  const loose: string[] = [];
  const visit = (path: string) => {
    const stats = lstatSync(path);
    const mode = stats.mode & 0o777;
    const wanted = stats.isDirectory() ? 0o700 : 0o600;
    if (mode !== wanted) loose.push(`${path.slice(folder.length) || '/'} ${mode.toString(8)}`);
    if (stats.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(folder);
  return loose;
}

/** Runs the test body under this umask, restoring the process's after it. */
function underUmask(t: Test, mask: number): void {
  const before = process.umask(mask);
  t.teardown(() => {
    process.umask(before);
  });
}

t.test('under umask 022, a new DATA_DIR and everything in it is owner-only once the server started', async (t) => {
  underUmask(t, 0o022);
  const scratch = scratchDir();
  t.teardown(scratch.remove);
  const dataDir = join(scratch.path, 'data');
  const env = { DATA_DIR: dataDir, PORT: '0', METRICS_PORT: 'off', LOG_LEVEL: 'silent' };
  const running = await startServer(env, textSink().stream);
  t.teardown(() => running.shutdown('SIGINT'));
  t.ok(running.controlSocket?.startsWith(dataDir), 'the control socket is in DATA_DIR too');
  const files = readdirSync(join(dataDir, 'pgdata', 'global')).length;
  t.ok(files > 10, `the database's files are there (${files} in global/)`);
  t.same(notOwnerOnly(dataDir), [], 'every folder 0700, every file 0600');
  await running.shutdown('SIGINT');
  t.same(notOwnerOnly(dataDir), [], 'and so after it stopped');
});

t.test('a DATA_DIR of ours that others could reach (0755, files 0666) is tightened at start', async (t) => {
  const dir = await migratedDataDir();
  t.teardown(dir.remove);
  const loosen = (path: string) => {
    const stats = lstatSync(path);
    chmodSync(path, stats.isDirectory() ? 0o755 : 0o666);
    if (stats.isDirectory()) for (const name of readdirSync(path)) loosen(join(path, name));
  };
  loosen(dir.path);
  t.not(notOwnerOnly(dir.path).length, 0, 'loose before');
  const db = await openDatabase({ dataDir: dir.path });
  t.same(notOwnerOnly(dir.path), [], 'owner-only once open');
  await db.close();
});

const other = otherUser();

t.test(
  'a DATA_DIR, or a file in it, that belongs to another user is refused with the fix',
  'skip' in other ? { skip: other.skip } : {},
  async (t) => {
    if ('skip' in other) return;
    const dir = await migratedDataDir();
    t.teardown(dir.remove);
    chownSync(dir.path, other.uid, other.uid);
    const env = { DATA_DIR: dir.path, PORT: '0', METRICS_PORT: 'off', LOG_LEVEL: 'silent' };
    await t.rejects(startServer(env, textSink().stream), {
      name: 'StartupError',
      message: new RegExp(
        `^${dir.path} belongs to uid ${other.uid}, not to the user running the service \\(uid 0\\): .*chown -R 0 ${dir.path}`,
      ),
    });
    chownSync(dir.path, 0, 0);

    const planted = join(dir.path, 'pgdata', 'global', 'pg_control');
    chownSync(planted, other.uid, other.uid);
    await t.rejects(openDatabase({ dataDir: dir.path }), {
      name: 'DataDirAccessError',
      message: new RegExp(`^${planted} belongs to uid ${other.uid}`),
    });
    chownSync(planted, 0, 0);
    const db = await openDatabase({ dataDir: dir.path });
    t.pass('opens once everything is ours again');
    await db.close();
  },
);

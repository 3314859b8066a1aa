import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, lchownSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import pino from 'pino';
import t, { type Test } from 'tap';
import { runApiKey } from '../../src/cli/apikey.js';
import { prepareControlSocket } from '../../src/control/socketPath.js';
import { openDatabase } from '../../src/db/index.js';
import { lockDataDir } from '../../src/db/dataDirLock.js';
import { openControlSocket } from '../../src/process/controlSocket.js';
import { migratedDataDir } from '../helpers/databases.js';
import { copyEmbeddedTemplate } from '../helpers/embeddedTemplate.js';
import { runInProcess } from '../helpers/processes.js';
import { scratchDir } from '../helpers/scratchSpace.js';
import { otherUser } from './otherUser.js';

/**
 * What a server that crashed leaves, with DATA_DIR's lock now held (here by
 * this process, so the CLI turns to the socket): DATA_DIR/control with the
 * dead server's secret, and a record naming a socket elsewhere, where a fake
 * listens that answers every command as done and counts what it received.
 */
async function staleRecordWithFake(t: Test) {
  const dir = await migratedDataDir();
  const lock = await lockDataDir(dir.path);
  const home = join(dir.path, 'control');
  mkdirSync(home, { mode: 0o700 });
  writeFileSync(join(home, 'server-secret'), randomBytes(32).toString('hex'), { mode: 0o600 });
  const elsewhere = scratchDir('pets-stale-socket-');
  const socket = join(elsewhere.path, 'apikey.sock');
  writeFileSync(join(home, 'socket-path'), `${socket}\n`, { mode: 0o600 });
  let received = 0;
  const fake: Server = createServer((connection) => {
    received += 1;
    connection.end(`${JSON.stringify({ out: 'Revoked key id 1 (name default)\n' })}\n${JSON.stringify({ exit: 0 })}\n`);
  });
  await new Promise<void>((resolve) => fake.listen(socket, resolve));
  t.teardown(() => {
    fake.close();
    lock.release();
    elsewhere.remove();
    dir.remove();
  });
  const revoke = () => runInProcess((streams) => runApiKey(['revoke', 'default'], { DATA_DIR: dir.path }, streams));
  return { dataDir: dir.path, home, folder: elsewhere.path, socket, revoke, received: () => received };
}

t.test('a fake listener at a stale recorded path is never reported as done', async (t) => {
  const stale = await staleRecordWithFake(t);
  const result = await stale.revoke();
  t.equal(stale.received(), 1, 'the fake was asked (the socket and its folder are ours, so trusted that far)');
  t.equal(result.code, 1, 'a failure');
  t.equal(result.stdout, '', 'nothing it answered is printed');
  t.match(
    result.stderr,
    /^Refusing the answer: the listener at .* did not prove it is the server holding DATA_DIR's lock/,
  );
});

t.test('a socket folder that others can write is refused before anything is sent', async (t) => {
  const stale = await staleRecordWithFake(t);
  chmodSync(stale.folder, 0o777);
  const result = await stale.revoke();
  t.equal(result.code, 1);
  t.equal(result.stdout, '');
  t.match(
    result.stderr,
    new RegExp(`^Refusing the control socket: ${stale.folder} can be written by other users \\(mode 777\\)`),
  );
  t.equal(stale.received(), 0, 'nothing was sent');
  chmodSync(stale.folder, 0o700);
});

const other = otherUser();

t.test(
  'a socket, or its folder, owned by another user is refused before anything is sent',
  'skip' in other ? { skip: other.skip } : {},
  async (t) => {
    if ('skip' in other) return;
    const stale = await staleRecordWithFake(t);
    lchownSync(stale.socket, other.uid, other.uid);
    const result = await stale.revoke();
    t.equal(result.code, 1);
    t.equal(result.stdout, '');
    t.match(
      result.stderr,
      new RegExp(`^Refusing the control socket: ${stale.socket} belongs to uid ${other.uid}, not to this user`),
    );
    lchownSync(stale.socket, 0, 0);
    lchownSync(stale.folder, other.uid, other.uid);
    t.match((await stale.revoke()).stderr, new RegExp(`${stale.folder} belongs to uid ${other.uid}`));
    lchownSync(stale.folder, 0, 0);
    t.equal(stale.received(), 0, 'nothing was sent');
  },
);

t.test('the server removes a stale record and secret before anything can fail', async (t) => {
  const dir = await migratedDataDir();
  t.teardown(dir.remove);
  const dataDir = join(dir.path, 'x'.repeat(100));
  const home = join(dataDir, 'control');
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(join(home, 'socket-path'), `${join(dir.path, 'gone', 'apikey.sock')}\n`);
  writeFileSync(join(home, 'server-secret'), randomBytes(32).toString('hex'));
  // The socket's folder cannot be made: the runtime folder does not exist.
  t.throws(() => prepareControlSocket(dataDir, join(dir.path, 'no-such-runtime')), { code: 'ENOENT' });
  t.notOk(existsSync(join(home, 'socket-path')), 'the stale record is gone');
  t.notOk(existsSync(join(home, 'server-secret')), 'and the dead server secret');
});

/** The folder release 1.3.0 put the socket in for a long DATA_DIR: a hash anyone can compute. */
const hashedFolder = (runtime: string, dataDir: string) =>
  join(runtime, `pet-store-${createHash('sha256').update(join(dataDir, 'control')).digest('hex').slice(0, 16)}`);

t.test(
  "another user's folder at the hashed name no longer turns live key management off",
  'skip' in other ? { skip: other.skip } : {},
  async (t) => {
    if ('skip' in other) return;
    const dir = await migratedDataDir();
    t.teardown(dir.remove);
    const runtime = scratchDir();
    t.teardown(runtime.remove);
    chmodSync(runtime.path, 0o1777);
    const dataDir = join(dir.path, 'd'.repeat(100));
    await copyEmbeddedTemplate(dataDir);
    const squatted = hashedFolder(runtime.path, dataDir);
    mkdirSync(squatted, { mode: 0o777 });
    chmodSync(squatted, 0o777);
    lchownSync(squatted, other.uid, other.uid);
    // The server as startServer runs it: the database held (DATA_DIR locked), the socket opened.
    const db = await openDatabase({ dataDir });
    t.teardown(() => db.close());
    const logged: string[] = [];
    const control = await openControlSocket(
      db,
      dataDir,
      { XDG_RUNTIME_DIR: runtime.path },
      pino({}, { write: (line: string) => void logged.push(line) }),
    );
    t.ok(control, `the socket opened (${logged.join('')})`);
    t.teardown(() => control?.close());
    t.not(dirname(control?.path ?? ''), squatted, 'elsewhere than the hashed folder');
    t.equal(dirname(dirname(control?.path ?? '')), runtime.path, 'in a folder of its own under the runtime folder');
    const created = await runInProcess((streams) => runApiKey(['create', 'live'], { DATA_DIR: dataDir }, streams));
    t.equal(created.code, 0, `apikey create ran in the server (${created.stderr})`);
    t.match(logged.join(''), /npm run apikey ran over the control socket/, 'over the control socket');
    const left = dirname(control?.path ?? '');
    await control?.close();
    t.notOk(existsSync(left), 'its folder goes when the server stops');
    t.ok(existsSync(squatted), "another user's folder is left alone");
  },
);

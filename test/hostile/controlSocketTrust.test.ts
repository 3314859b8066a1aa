import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, lchownSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { runApiKey } from '../../src/cli/apikey.js';
import { ControlFolderError, controlSocketPlace, prepareControlSocket } from '../../src/control/socketPath.js';
import { lockDataDir } from '../../src/db/dataDirLock.js';
import { migratedDataDir } from '../helpers/databases.js';
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

t.test(
  'the server removes a stale record and secret before anything can fail',
  'skip' in other ? { skip: other.skip } : {},
  async (t) => {
    if ('skip' in other) return;
    const dir = await migratedDataDir();
    t.teardown(dir.remove);
    const runtime = scratchDir();
    t.teardown(runtime.remove);
    // A DATA_DIR too long for a socket path: the socket's folder goes under the runtime folder, where
    // another user made it first.
    const dataDir = join(dir.path, 'x'.repeat(100));
    const place = controlSocketPlace(dataDir, runtime.path);
    mkdirSync(place.home, { recursive: true, mode: 0o700 });
    writeFileSync(join(place.home, 'socket-path'), `${place.socket}\n`);
    writeFileSync(join(place.home, 'server-secret'), randomBytes(32).toString('hex'));
    mkdirSync(place.folder, { mode: 0o700 });
    lchownSync(place.folder, other.uid, other.uid);
    t.throws(() => prepareControlSocket(place), ControlFolderError);
    t.notOk(existsSync(join(place.home, 'socket-path')), 'the stale record is gone');
    t.notOk(existsSync(join(place.home, 'server-secret')), 'and the dead server secret');
    lchownSync(place.folder, 0, 0);
  },
);

import { randomBytes } from 'node:crypto';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import t, { type Test } from 'tap';
import { runApiKey } from '../../src/cli/apikey.js';
import { controlLimits, sendCommand, serveCommands } from '../../src/control/channel.js';
import { openDatabase } from '../../src/db/index.js';
import { openControlSocket } from '../../src/process/controlSocket.js';
import { migratedDataDir } from '../helpers/databases.js';
import { runInProcess, textSink } from '../helpers/processes.js';
import { scratchDir } from '../helpers/scratchSpace.js';

/**
 * The CLI's side of the control socket: it sends its arguments only to a
 * listener that has proved it is the server, gives up on a silent one with
 * one line, and a CLI past the server's connection limit is told to try
 * again (one line, exit 1), not shown a stack.
 */

const quick = { proofMs: 300, commandMs: 300 };
const streams = () => ({ out: textSink().stream, err: textSink().stream });

/** A listener that says nothing (or `answer`) and keeps what it was sent. */
async function fakeListener(t: Test, answer?: string) {
  const dir = scratchDir();
  t.teardown(dir.remove);
  const path = join(dir.path, 'fake.sock');
  let received = '';
  const held: Socket[] = [];
  let firstClosed: () => void = () => undefined;
  // What the first client sent is whole once its connection has closed: a client that gave up may close
  // before its bytes are read here, on a busy machine.
  const closed = new Promise<void>((resolve) => (firstClosed = resolve));
  const server: Server = createServer((socket) => {
    held.push(socket);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.once('close', () => {
      firstClosed();
    });
    if (answer !== undefined) socket.write(answer);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  t.teardown(() => {
    held.forEach((socket) => socket.destroy());
    server.close();
  });
  return { path, received: () => received, closed: () => closed };
}

t.test('a silent listener gets the nonce only, and the CLI gives up with one line', async (t) => {
  const fake = await fakeListener(t);
  await t.rejects(sendCommand(fake.path, ['revoke', 'default'], randomBytes(32), streams(), quick), {
    name: 'ControlTimeoutError',
    message: /^The server at .* did not answer within 300 ms; nothing was sent\.$/,
  });
  await fake.closed();
  t.match(fake.received(), /^\{"nonce":"[0-9a-f]{32}"\}\n$/, 'the nonce, nothing more');
  t.notMatch(fake.received(), /revoke|argv/, 'never the arguments');
});

t.test('a process held past the deadline (a busy machine) still sends the nonce before it gives up', async (t) => {
  const fake = await fakeListener(t);
  const sent = sendCommand(fake.path, ['revoke', 'default'], randomBytes(32), streams(), quick);
  // Hold the event loop past the deadline, as a starved process is: the timer is due before the connect is read.
  const heldUntil = Date.now() + 2 * quick.proofMs;
  while (Date.now() < heldUntil);
  await t.rejects(sent, { name: 'ControlTimeoutError' });
  await fake.closed();
  t.match(fake.received(), /^\{"nonce":"[0-9a-f]{32}"\}\n$/, 'the nonce was sent, then the deadline ran from it');
});

t.test('a listener with a wrong proof never gets the arguments', async (t) => {
  const fake = await fakeListener(t, `${JSON.stringify({ proof: 'f'.repeat(64) })}\n`);
  await t.rejects(sendCommand(fake.path, ['revoke', 'default'], randomBytes(32), streams(), quick), {
    name: 'UnprovenServerError',
  });
  t.notMatch(fake.received(), /revoke|argv/, 'never the arguments');
});

t.test('a command that never ends: the CLI gives up after the deadline', async (t) => {
  const dir = scratchDir();
  t.teardown(dir.remove);
  const path = join(dir.path, 'commands.sock');
  const secret = randomBytes(32);
  const server = await serveCommands(path, () => new Promise<number>(() => undefined), secret, t.error);
  t.teardown(() => server.close());
  await t.rejects(sendCommand(path, ['list'], secret, streams(), quick), {
    name: 'ControlTimeoutError',
    message: /did not finish the command within 300 ms; it may still finish/,
  });
});

t.test('a CLI past the connection limit is told to try again, in one line', async (t) => {
  const dir = await migratedDataDir();
  t.teardown(dir.remove);
  const db = await openDatabase({ dataDir: dir.path });
  t.teardown(() => db.close());
  const control = await openControlSocket(db, dir.path, {}, pino({ level: 'silent' }));
  if (control === undefined) throw new Error('no control socket');
  t.teardown(() => control.close());
  const held: Socket[] = [];
  t.teardown(() => {
    held.forEach((socket) => socket.destroy());
  });
  await Promise.all(
    Array.from({ length: controlLimits.maxConnections }, async () => {
      const socket = createConnection(control.path);
      held.push(socket);
      await new Promise((resolve) => socket.once('connect', resolve));
    }),
  );
  const result = await runInProcess((io) => runApiKey(['list'], { DATA_DIR: dir.path }, io));
  t.equal(result.code, 1, 'exit 1');
  t.equal(result.stdout, '');
  t.match(
    result.stderr,
    /^The server is busy \(all its control connections at .* are taken\); nothing was sent\. Try again\.\n$/,
  );
  t.notMatch(result.stderr, /EPIPE|\n\s+at /, 'no raw error, no stack');
  held.forEach((socket) => socket.destroy());
  // The server hears of the closes in a moment: try again, as the message says, until it has.
  let later = await runInProcess((io) => runApiKey(['list'], { DATA_DIR: dir.path }, io));
  for (let tries = 0; later.code !== 0 && /busy/.test(later.stderr) && tries < 500; tries += 1) {
    await sleep(10);
    later = await runInProcess((io) => runApiKey(['list'], { DATA_DIR: dir.path }, io));
  }
  t.equal(later.code, 0, `once the connections go, the command runs (${later.stderr})`);
});

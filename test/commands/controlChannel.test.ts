import { randomBytes } from 'node:crypto';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { sendCommand, serveCommands } from '../../src/control/channel.js';
import { textSink } from '../helpers/processes.js';
import { scratchDir } from '../helpers/scratchSpace.js';

/** What a raw client that sends text gets back, until the server closes. */
function rawExchange(path: string, text: string | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      resolve(received);
    });
    if (text !== undefined) socket.write(text);
  });
}

t.test('the control channel: output in the order written, then the exit code; bad requests refused', async (t) => {
  const dir = scratchDir();
  t.teardown(dir.remove);
  const path = join(dir.path, 'commands.sock');
  const secret = randomBytes(32);
  const errors: unknown[] = [];
  const server = await serveCommands(
    path,
    // Writes after an await, as a command does after its query: then it ends in the same
    // microtask run as its last write, before any write callback.
    async (argv, { out, err }) => {
      await Promise.resolve();
      for (const arg of argv) out.write(`${arg}\n`);
      err.write('to stderr\n');
      for (let line = 1; line <= 200; line += 1) out.write(`line ${line}\n`);
      return argv.length === 0 ? 2 : 0;
    },
    secret,
    (error) => errors.push(error),
  );
  const out = textSink();
  const err = textSink();
  t.equal(await sendCommand(path, ['list', '--json'], secret, { out: out.stream, err: err.stream }), 0);
  const lines = Array.from({ length: 200 }, (_, index) => `line ${index + 1}\n`).join('');
  t.equal(out.text(), `list\n--json\n${lines}`, 'every line, in order, before the exit code');
  t.equal(err.text(), 'to stderr\n');
  t.equal(await sendCommand(path, [], secret, { out: textSink().stream, err: textSink().stream }), 2, 'the exit code');

  t.match(await rawExchange(path, 'not json\n'), /"exit":2/, 'a malformed request: exit 2');
  t.match(await rawExchange(path, '{"argv":[1]}\n'), /"exit":2/, 'arguments that are not strings: exit 2');
  t.match(await rawExchange(path, '{"argv":[]}\n'), /"exit":2/, 'no nonce to prove itself with: exit 2');
  const idle = rawExchange(path, undefined);
  // Connections are accepted in the order they come: once a later one is answered, the idle one is in.
  t.equal(await sendCommand(path, ['x'], secret, { out: textSink().stream, err: textSink().stream }), 0);
  await server.close();
  t.equal(await idle, '', 'closing ends a connection that sent no command');
  t.same(errors, []);
});

/** Opens count connections that never send a command; resolves once each has connected or failed. */
async function idleConnections(path: string, count: number) {
  const sockets: Socket[] = [];
  let closed = 0;
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve) => {
          // Read: a client sees the server's end only once it has read the busy line before it.
          const socket = createConnection(path).resume();
          sockets.push(socket);
          socket.on('connect', () => {
            resolve();
          });
          socket.on('error', () => {
            resolve();
          });
          socket.on('close', () => {
            closed += 1;
            resolve();
          });
        }),
    ),
  );
  return { sockets, open: () => count - closed };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

t.test('a connection that sends no command is closed after the idle timeout', async (t) => {
  const dir = scratchDir();
  t.teardown(dir.remove);
  const path = join(dir.path, 'commands.sock');
  const server = await serveCommands(path, () => Promise.resolve(0), randomBytes(32), t.error, {
    idleTimeoutMs: 200,
    maxConnections: 16,
  });
  t.teardown(() => server.close());
  const idle = await idleConnections(path, 3);
  await until(() => idle.open() === 0, 'the idle connections closed by the server');
  t.pass('closed by the server, though the client never closed them');
});

t.test('past the cap, a new connection is closed at once; a command gets through once one goes', async (t) => {
  const dir = scratchDir();
  t.teardown(dir.remove);
  const path = join(dir.path, 'commands.sock');
  const secret = randomBytes(32);
  const server = await serveCommands(path, () => Promise.resolve(0), secret, t.error, {
    idleTimeoutMs: 600_000,
    maxConnections: 3,
  });
  t.teardown(() => server.close());
  const idle = await idleConnections(path, 10);
  await until(() => idle.open() === 3, 'all but the cap closed by the server');
  idle.sockets.forEach((socket) => socket.destroy());
  await until(() => idle.open() === 0, 'the client closes the rest');
  t.equal(await sendCommand(path, ['list'], secret, { out: textSink().stream, err: textSink().stream }), 0);
});

t.test('the client reports nothing from a listener that cannot prove it knows the secret', async (t) => {
  const dir = scratchDir();
  t.teardown(dir.remove);
  const path = join(dir.path, 'commands.sock');
  const out = textSink();
  // Another server: it answers, with a secret of its own.
  const server = await serveCommands(
    path,
    async (_argv, streams) => {
      streams.out.write('Revoked key id 1\n');
      return Promise.resolve(0);
    },
    randomBytes(32),
    t.error,
  );
  t.teardown(() => server.close());
  await t.rejects(sendCommand(path, ['revoke', 'default'], randomBytes(32), { out: out.stream, err: out.stream }), {
    name: 'UnprovenServerError',
  });
  t.equal(out.text(), '', 'nothing it sent is written');
});

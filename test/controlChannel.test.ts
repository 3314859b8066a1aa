import { randomBytes } from 'node:crypto';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { sendCommand, serveCommands } from '../src/control/channel.js';
import { textSink } from './helpers/processes.js';
import { scratchDir } from './helpers/scratchSpace.js';

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
  await new Promise((resolve) => setTimeout(resolve, 50));
  await server.close();
  t.equal(await idle, '', 'closing ends a connection that sent no command');
  t.same(errors, []);
});

import { spawn } from 'node:child_process';
import { createConnection, type Socket } from 'node:net';
import t from 'tap';
import { findControlSocket } from '../../src/control/socketPath.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { migratedDataDir } from '../helpers/databases.js';
import { finished, testNodeFlags } from '../helpers/processes.js';

/**
 * The server's descriptor limit: what it needs to serve (about 60 open at
 * rest, measured in /proc/<pid>/fd) with room to spare, and far fewer than
 * the idle connections below, so that holding them would leave none for the API.
 */
const descriptorLimit = 400;
const idleConnections = 1_000;

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

t.test(`${idleConnections} idle control connections do not stop /healthz`, async (t) => {
  const dir = await migratedDataDir();
  t.teardown(dir.remove);
  const child = spawn(
    'prlimit',
    [
      `--nofile=${descriptorLimit}:${descriptorLimit}`,
      process.execPath,
      '--import',
      'tsx',
      ...testNodeFlags,
      'src/server.ts',
    ],
    {
      cwd: repoRoot,
      env: {
        ...process.env,
        DATA_DIR: dir.path,
        DATABASE_URL: '',
        PORT: '0',
        METRICS_PORT: 'off',
        LOG_LEVEL: 'info',
        DRAIN_DELAY_MS: '0',
      },
    },
  );
  const done = finished(child);
  t.teardown(() => child.kill('SIGKILL'));
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await until(() => output.includes('npm run apikey reaches this server over'), 'the control socket open');
  const address = /serving (http:\/\/[0-9.:]+)/.exec(output)?.[1];
  const socket = findControlSocket(dir.path)?.path;
  if (socket === undefined || address === undefined) throw new Error(`no control socket or address in:\n${output}`);

  const sockets: Socket[] = [];
  let open = 0;
  await Promise.all(
    Array.from(
      { length: idleConnections },
      () =>
        new Promise<void>((resolve) => {
          // Read: a client sees the server's end only once it has read the busy line before it.
          const connection = createConnection(socket).resume();
          sockets.push(connection);
          connection.on('connect', () => {
            open += 1;
            resolve();
          });
          connection.on('error', () => {
            resolve();
          });
          connection.on('close', (hadError) => {
            if (!hadError || connection.readyState !== 'opening') open -= 1;
            resolve();
          });
        }),
    ),
  );
  t.teardown(() => {
    sockets.forEach((connection) => connection.destroy());
  });
  const health = await fetch(`${address}/healthz`, { signal: AbortSignal.timeout(30_000) });
  t.equal(health.status, 200, `/healthz answers with ${open} control connections still open`);
  await until(() => open <= 0, 'every idle control connection closed by the server');
  t.pass('the server closed every one of them');
  t.equal((await fetch(`${address}/healthz`)).status, 200, 'and /healthz still answers');
  child.kill('SIGTERM');
  t.equal((await done).code, 0, 'the server stops cleanly');
});

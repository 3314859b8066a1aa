import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import t from 'tap';
import { generateApiKey } from '../src/auth/keys.js';
import { lockDataDir } from '../src/db/dataDirLock.js';
import { forEachBackend } from './helpers/app.js';
import { openBackend, postgresUnavailableReason } from './helpers/databases.js';
import { testNodeFlags, testServerEnv } from './helpers/processes.js';

interface LogLine {
  msg?: string;
  [field: string]: unknown;
}

/** The server as production runs it, in its own process; log lines are awaited by message. */
function startServer(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', ...testNodeFlags, 'src/server.ts'], {
    env: {
      PATH: process.env['PATH'] ?? '',
      ...testServerEnv,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      DRAIN_DELAY_MS: '0',
      // Test files run in parallel: no shared default metrics port.
      METRICS_PORT: 'off',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  const waiters: Array<{ test: (line: LogLine) => boolean; resolve: (line: LogLine) => void }> = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  createInterface({ input: child.stdout }).on('line', (text) => {
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      return;
    }
    lines.push(line);
    for (const waiter of [...waiters]) {
      if (waiter.test(line)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const waitFor = (pattern: RegExp) =>
    new Promise<LogLine>((resolve, reject) => {
      const seen = lines.find((line) => pattern.test(line.msg ?? ''));
      if (seen) {
        resolve(seen);
        return;
      }
      waiters.push({ test: (line) => pattern.test(line.msg ?? ''), resolve });
      void exited.then(([code]) => {
        reject(new Error(`server exited (${code}) before logging ${pattern}: ${stderr}`));
      });
    });
  return { child, exited, waitFor, lines, stderr: () => stderr };
}

t.test('SIGTERM: idle connections close at once, the in-flight request finishes, the process exits right after', (t) =>
  forEachBackend(t, async (t, backend) => {
    const opened = await openBackend(backend);
    // The server opens the database itself; an embedded one must be free.
    await opened.db.close();
    t.teardown(() => opened.close().catch(() => undefined));
    const key = generateApiKey();
    const shutdownTimeoutMs = 60_000;
    const server = startServer({
      ...opened.env,
      BOOTSTRAP_API_KEY: key,
      SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs),
    });
    t.teardown(() => {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    });
    const serving = await server.waitFor(/^serving http/);
    const port = Number(/:(\d+)\//.exec(serving.msg ?? '')?.[1]);
    t.ok(port > 0, `listening on ${port}`);

    // A keep-alive connection left idle after one answer.
    const idle = connect(port, '127.0.0.1');
    await once(idle, 'connect');
    const answered = await exchangeOn(
      idle,
      ['GET /v1/pets HTTP/1.1', `Host: 127.0.0.1:${port}`, `Authorization: Bearer ${key}`, '', ''].join('\r\n'),
    );
    t.notMatch(answered.head, /connection: close/i, 'the idle connection was kept alive');
    const idleClosed = once(idle, 'close');

    // Expect: 100-continue makes the server confirm it holds the request
    // before the body is sent, so the request is surely in flight at SIGTERM.
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
    });
    const body = JSON.stringify({ name: 'Late', categoryId: 7 });
    socket.write(
      [
        'POST /v1/pets HTTP/1.1',
        `Host: 127.0.0.1:${port}`,
        `Authorization: Bearer ${key}`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Expect: 100-continue',
        '',
        '',
      ].join('\r\n'),
    );
    const interim = 'HTTP/1.1 100 Continue\r\n\r\n';
    while (!received.includes(interim)) await once(socket, 'data');
    received = received.slice(received.indexOf(interim) + interim.length);

    server.child.kill('SIGTERM');
    await server.waitFor(/^shutting down/);
    await idleClosed;
    t.pass('the idle keep-alive connection is closed once the server stops accepting');
    t.equal(server.child.exitCode, null, 'the process waits for the request');

    const answeredAt = Date.now();
    socket.write(body);
    await once(socket, 'close');
    const [head = '', responseBody = ''] = received.split('\r\n\r\n');
    t.match(head, /^HTTP\/1\.1 201 /, 'the in-flight request completes with 201');
    t.match(head, /\r\nconnection: close\r\n/i, 'its answer says Connection: close, and the connection closes');
    t.match(JSON.parse(responseBody), { name: 'Late', categoryId: 7 });

    const [code, signal] = await server.exited;
    const exitMs = Date.now() - answeredAt;
    t.equal(signal, null);
    t.equal(code, 0, `exit code 0 (stderr: ${server.stderr()})`);
    // Far below the deadline it used to wait for (60 s), and generous for a busy
    // machine: on Node 24 the embedded database's exit took 1.1 s alone and
    // 3.8-5.1 s in CI's runs of three suites at once.
    t.ok(
      exitMs < 15_000,
      `exits ${exitMs} ms after the last answer, not at SHUTDOWN_TIMEOUT_MS (${shutdownTimeoutMs} ms)`,
    );
    t.notOk(
      server.lines.some((line) => /^shutdown timeout reached/.test(line.msg ?? '')),
      'no shutdown timeout',
    );
    t.match(
      server.lines.find((line) => line.msg === 'shut down'),
      { timedOut: false },
      'logged the end of the shutdown, within the deadline',
    );
    if (backend === 'embedded') {
      const lock = await lockDataDir(opened.env['DATA_DIR'] ?? '');
      t.pass('the embedded database lock is released');
      lock.release();
    }
  }),
);

/** One HTTP/1.1 request on an open socket, and its response (Content-Length framed). */
async function exchangeOn(socket: Socket, request: string): Promise<{ head: string; body: string }> {
  let received = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
  };
  socket.on('data', onData);
  socket.write(request);
  for (;;) {
    const text = received.toString('latin1');
    const headEnd = text.indexOf('\r\n\r\n');
    const length = Number(/content-length: *(\d+)/i.exec(text)?.[1] ?? -1);
    if (headEnd >= 0 && length >= 0 && received.length >= headEnd + 4 + length) {
      socket.off('data', onData);
      return { head: text.slice(0, headEnd), body: received.subarray(headEnd + 4, headEnd + 4 + length).toString() };
    }
    await Promise.race([once(socket, 'data'), once(socket, 'close')]);
    if (socket.destroyed && !received.length) throw new Error('connection closed without an answer');
  }
}

t.test('SIGTERM: /readyz says 503 at once, requests are served through the drain delay, then it exits', async (t) => {
  const reason = await postgresUnavailableReason();
  const opened = await openBackend(reason ? 'embedded' : 'postgres');
  await opened.db.close();
  t.teardown(() => opened.close().catch(() => undefined));
  const key = generateApiKey();
  const server = startServer({ ...opened.env, BOOTSTRAP_API_KEY: key, DRAIN_DELAY_MS: '3000' });
  t.teardown(() => {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  });
  const serving = await server.waitFor(/^serving http/);
  const port = Number(/:(\d+)\//.exec(serving.msg ?? '')?.[1]);
  const get = (path: string) =>
    [`GET ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, `Authorization: Bearer ${key}`, '', ''].join('\r\n');
  const keptAlive = connect(port, '127.0.0.1');
  await once(keptAlive, 'connect');
  const first = await exchangeOn(keptAlive, get('/v1/pets'));
  t.match(first.head, /^HTTP\/1\.1 200 /);
  t.notMatch(first.head, /connection: close/i, 'a keep-alive connection');

  server.child.kill('SIGTERM');
  await server.waitFor(/^draining/);
  const fresh = () => {
    const socket = connect(port, '127.0.0.1');
    return once(socket, 'connect').then(() => socket);
  };
  const ready = await exchangeOn(await fresh(), get('/readyz'));
  t.match(ready.head, /^HTTP\/1\.1 503 /, '/readyz: 503 for the balancer');
  t.match(JSON.parse(ready.body), { code: 'service_unavailable' });
  const newConnection = await exchangeOn(await fresh(), get('/v1/pets'));
  t.match(newConnection.head, /^HTTP\/1\.1 200 /, 'a new connection is still served');
  const closed = once(keptAlive, 'close');
  const onKeptAlive = await exchangeOn(keptAlive, get('/v1/pets'));
  t.match(onKeptAlive.head, /^HTTP\/1\.1 200 /, 'the kept-alive connection is served');
  t.match(onKeptAlive.head, /connection: close/i, 'and told to close');
  await closed;
  t.notOk(
    server.lines.some((line) => /^shutting down/.test(line.msg ?? '')),
    'all of that happened within the drain delay',
  );

  await server.waitFor(/^shutting down/);
  const [code] = await server.exited;
  t.equal(code, 0, server.stderr());
  const refused = connect(port, '127.0.0.1');
  const [error] = (await once(refused, 'error')) as [NodeJS.ErrnoException];
  t.equal(error.code, 'ECONNREFUSED', 'the listener is closed');
});

t.test('request lines are written in batches, yet show within the flush interval and survive the exit', async (t) => {
  const opened = await openBackend('embedded');
  await opened.db.close();
  t.teardown(() => opened.close().catch(() => undefined));
  const key = generateApiKey();
  const server = startServer({ ...opened.env, BOOTSTRAP_API_KEY: key });
  t.teardown(() => {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  });
  const serving = await server.waitFor(/^serving http/);
  const base = `http://127.0.0.1:${/:(\d+)\//.exec(serving.msg ?? '')?.[1]}`;
  const get = (id: string) =>
    fetch(`${base}/v1/pets`, { headers: { authorization: `Bearer ${key}`, 'x-request-id': id } }).then((r) => r.text());
  const requestLines = () => server.lines.filter((line) => line.msg === 'request completed');

  // Far fewer bytes than a batch: only the periodic flush writes this line while the server idles.
  await get('idle-1');
  const shown = await Promise.race([
    server.waitFor(/^request completed$/).then(() => true),
    new Promise<boolean>((resolve) =>
      setTimeout(() => {
        resolve(false);
      }, 60_000).unref(),
    ),
  ]);
  // Without the periodic flush the line would wait for the exit: a generous ceiling tells them apart.
  t.ok(shown, 'the line of a lone request is on stdout while the server idles');

  // Answered, then stopped at once: these lines are still buffered when the process exits.
  const ids = ['exit-1', 'exit-2', 'exit-3', 'exit-4'];
  await Promise.all(ids.map(get));
  server.child.kill('SIGINT');
  const [code] = await server.exited;
  t.equal(code, 0);
  t.same(
    requestLines()
      .map((line) => line['requestId'])
      .filter((id) => ids.includes(String(id)))
      .sort(),
    ids,
    'every answered request has its line after the exit',
  );
  t.ok(
    server.lines.some((line) => line.msg === 'shut down'),
    'and so does the last line of the shutdown',
  );
});

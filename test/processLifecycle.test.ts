import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import t, { type Test } from 'tap';
import { generateApiKey } from '../src/auth/keys.js';
import { openBackend, postgresUnavailableReason } from './helpers/databases.js';
import { repoRoot } from '../lib/repoRoot.js';
import { testNodeFlags, testServerEnv } from './helpers/processes.js';

interface LogLine {
  level: number;
  msg: string;
  err?: { message?: string; stack?: string };
  [field: string]: unknown;
}

/** src/server.ts as npm start runs it, with the fault fixture loaded; stdout must be JSON lines only. */
async function startProcess(t: Test, env: Record<string, string> = {}) {
  // PostgreSQL where there is one: an embedded database costs seconds of CPU to open.
  const opened = await openBackend((await postgresUnavailableReason()) ? 'embedded' : 'postgres');
  await opened.db.close();
  t.teardown(() => opened.close().catch(() => undefined));
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', ...testNodeFlags, '--import', './test/fixtures/process/faultOnStdin.ts', 'src/server.ts'],
    {
      cwd: repoRoot,
      env: {
        PATH: process.env['PATH'] ?? '',
        ...testServerEnv,
        ...opened.env,
        HOST: '127.0.0.1',
        PORT: '0',
        METRICS_PORT: 'off',
        LOG_LEVEL: 'info',
        DRAIN_DELAY_MS: '0',
        BOOTSTRAP_API_KEY: generateApiKey(),
        ...env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const lines: LogLine[] = [];
  const notJson: string[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const waiters: Array<() => void> = [];
  createInterface({ input: child.stdout }).on('line', (text) => {
    try {
      lines.push(JSON.parse(text) as LogLine);
    } catch {
      notJson.push(text);
    }
    for (const wake of waiters.splice(0)) wake();
  });
  const waitFor = async (pattern: RegExp): Promise<LogLine> => {
    for (;;) {
      const line = lines.find((candidate) => pattern.test(candidate.msg));
      if (line) return line;
      await Promise.race([
        new Promise<void>((resolve) => waiters.push(resolve)),
        exited.then(([code]) => {
          throw new Error(`exited (${code}) before logging ${pattern}: ${stderr}`);
        }),
      ]);
    }
  };
  await waitFor(/^serving http/);
  return { child, lines, notJson, exited, waitFor, stderr: () => stderr };
}

for (const [fault, input] of [
  ['an uncaught exception', 'throw\n'],
  ['an unhandled rejection', 'reject\n'],
] as const) {
  t.test(`${fault} is logged as one JSON line, then the process shuts down and exits 1`, async (t) => {
    const server = await startProcess(t);
    server.child.stdin.write(input);
    const [code] = await server.exited;
    t.equal(code, 1, 'exit code 1');
    const errorLines = server.lines.filter((line) => line.err !== undefined);
    t.equal(errorLines.length, 1, 'one line carries the error');
    t.match(errorLines[0], {
      level: 60,
      msg: 'uncaught error: shutting down',
      err: { message: /^a (bug outside any request|promise nobody awaited)$/, stack: /faultOnStdin\.ts/ },
    });
    t.same(server.notJson, [], 'nothing but JSON lines on stdout');
    t.equal(server.stderr(), '', 'nothing on stderr (no stack printed by Node)');
    t.ok(
      server.lines.some((line) => line.msg === 'shut down'),
      'the server shut down before the exit',
    );
  });
}

t.test('a second SIGTERM during the drain exits at once', async (t) => {
  const server = await startProcess(t, { DRAIN_DELAY_MS: '30000' });
  server.child.kill('SIGTERM');
  await server.waitFor(/^draining/);
  const secondAt = Date.now();
  server.child.kill('SIGTERM');
  const [code] = await server.exited;
  const exitMs = Date.now() - secondAt;
  t.equal(code, 1, 'exit code 1');
  // A ceiling a busy machine stays under, still well short of the drain.
  t.ok(exitMs < 20_000, `exited ${exitMs} ms after the second signal, not after the 30 s drain`);
  t.match(
    server.lines.find((line) => /^second signal/.test(line.msg)),
    { level: 40, signal: 'SIGTERM' },
    'and says why',
  );
});

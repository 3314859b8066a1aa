import Fastify from 'fastify';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { generateApiKey, toStoredKey } from '../../src/auth/keys.js';
import { insertApiKey } from '../../src/db/apiKeys.js';
import { loggerOptions, stdoutIsTerminal } from '../../src/observability/logging.js';
import { testConfig, testLimits } from '../helpers/app.js';
import { openBackend } from '../helpers/databases.js';

t.test('one JSON line per request, and never a key', async (t) => {
  const opened = await openBackend('embedded');
  const key = generateApiKey();
  await insertApiKey(opened.db, toStoredKey('logged', key));
  const output: string[] = [];
  const app = await buildApp(
    { ...testConfig, LOG_LEVEL: 'trace' },
    { db: opened.db, logStream: { write: (line) => void output.push(line) }, limits: testLimits },
  );
  t.teardown(async () => {
    await app.close();
    await opened.close();
  });

  const wrongKey = generateApiKey();
  const ok = await app.inject({
    method: 'GET',
    url: '/v1/pets/1?x=1',
    headers: { authorization: `Bearer ${key}`, 'x-request-id': 'log-test-1' },
  });
  t.equal(ok.statusCode, 404);
  const denied = await app.inject({
    method: 'GET',
    url: '/v1/pets',
    headers: { authorization: `Bearer ${wrongKey}`, 'x-request-id': 'log-test-2' },
  });
  t.equal(denied.statusCode, 401);
  const malformed = await app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Basic ${key}` } });
  t.equal(malformed.statusCode, 401);

  const text = output.join('');
  t.notOk(text.includes(key), 'the accepted key is not in the log');
  t.notOk(text.includes(key.slice(5, 25)), 'nor any large part of it');
  t.notOk(text.includes(wrongKey), 'a rejected key is not in the log either');

  const lines = output
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const requestLines = lines.filter((line) => line['msg'] === 'request completed');
  t.equal(requestLines.length, 3, 'exactly one line per request');
  t.match(requestLines[0], {
    requestId: 'log-test-1',
    method: 'GET',
    route: '/v1/pets/:petId',
    path: '/v1/pets/1',
    status: 404,
    durationMs: Number,
  });
  t.match(requestLines[1], { requestId: 'log-test-2', method: 'GET', route: '/v1/pets', status: 401 });
  t.notOk(
    lines.some((line) => /incoming request/.test(String(line['msg']))),
    "fastify's own per-request lines are off",
  );
});

t.test('a log call that passes headers along gets them redacted', async (t) => {
  const output: string[] = [];
  const { log: logger } = Fastify({
    logger: loggerOptions({ LOG_LEVEL: 'info' }, { write: (line) => void output.push(line) }),
  });
  logger.info({ req: { headers: { authorization: 'Bearer pets_secret-value-123456' } } }, 'careless');
  logger.info({ headers: { authorization: 'Bearer pets_secret-value-123456' } }, 'careless');
  t.notOk(output.join('').includes('secret-value'));
  t.match(output.join(''), /\[redacted\]/);
});

t.test('LOG_LEVEL is honoured; pretty output only on a terminal', async (t) => {
  t.match(loggerOptions({ LOG_LEVEL: 'warn' }), { level: 'warn' });
  t.notOk(
    'transport' in loggerOptions({ LOG_LEVEL: 'info' }),
    'JSON lines: the test runner reads stdout through a pipe',
  );
  t.notOk('transport' in loggerOptions({ LOG_LEVEL: 'info' }, undefined, false), 'JSON lines off a terminal');
  t.match(loggerOptions({ LOG_LEVEL: 'info' }, undefined, true), { transport: { target: 'pino-pretty' } });
  t.ok(stdoutIsTerminal({ isTTY: true }), 'a terminal, with pino-pretty installed (a dev dependency)');
  t.notOk(stdoutIsTerminal({ isTTY: false }), 'a pipe or a file');
  t.notOk(stdoutIsTerminal({}), 'a stream that is no terminal at all');

  const opened = await openBackend('embedded');
  const output: string[] = [];
  const app = await buildApp(
    { ...testConfig, LOG_LEVEL: 'warn' },
    { db: opened.db, logStream: { write: (line) => void output.push(line) }, limits: testLimits },
  );
  t.teardown(async () => {
    await app.close();
    await opened.close();
  });
  await app.inject({ method: 'GET', url: '/healthz' });
  t.equal(output.length, 0, 'info lines are dropped at LOG_LEVEL=warn');
});

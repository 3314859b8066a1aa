import { mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startService } from '../../lib/instances/index.js';
import { apiKey, auth, call, listAll, privatePostgres } from './harness.js';

/**
 * Forwards requests to the service and swallows its answer: at the first
 * byte of the response (the pet is committed by then) it runs `crash` and
 * cuts the client, who therefore never learns that the create succeeded.
 */
async function answerSwallowingProxy(targetPort: number, crash: () => Promise<void>) {
  let crashed: Promise<void> | undefined;
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    for (const socket of [client, upstream]) socket.on('error', () => undefined);
    client.pipe(upstream);
    upstream.once('data', () => {
      crashed ??= crash();
      client.destroy();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address');
  return {
    port: address.port,
    crashed: () => crashed ?? Promise.reject(new Error('the service never answered')),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      }),
  };
}

async function crashBetweenCommitAndAnswer(t: Test, env: Record<string, string>): Promise<void> {
  const service = await startService({
    env: { ...env, BOOTSTRAP_API_KEY: apiKey, LOG_LEVEL: 'warn', DRAIN_DELAY_MS: '0' },
    readyTimeoutMs: 120_000,
  });
  t.teardown(() => service.remove());
  const proxy = await answerSwallowingProxy(service.port, () => service.kill());
  t.teardown(proxy.close);
  const api = `${service.origin}/v1`;
  const name = 'crash-between-commit-and-answer';
  const request = {
    method: 'POST',
    headers: { ...auth, 'idempotency-key': 'order-7f3a-crash' },
    body: JSON.stringify({ name, categoryId: 1 }),
  };

  const first = await call(`http://127.0.0.1:${proxy.port}/v1/pets`, request);
  t.equal(first.status, 0, 'the client got no answer');
  await proxy.crashed();
  await service.restart();
  const committed = (await listAll(api)).filter((pet) => pet.name === name);
  t.equal(committed.length, 1, 'the pet was committed before the kill -9');

  const retry = await fetch(`${api}/pets`, request);
  const body = (await retry.json()) as { id: number };
  t.equal(retry.status, 201);
  t.equal(retry.headers.get('idempotent-replayed'), 'true', 'the retry is answered from the stored answer');
  t.equal(body.id, committed[0]?.id, 'with the pet created before the crash');
  t.equal(retry.headers.get('location'), `/v1/pets/${body.id}`);
  t.equal((await listAll(api)).filter((pet) => pet.name === name).length, 1, 'no duplicate');
}

t.test('kill -9 between commit and answer, PostgreSQL: the retry gets the stored answer', async (t) => {
  const { url } = await privatePostgres(t);
  await crashBetweenCommitAndAnswer(t, { DATABASE_URL: url, MIGRATE_ON_START: 'true' });
});

t.test('kill -9 between commit and answer, embedded database: the retry gets the stored answer', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pets-idempotent-crash-'));
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  await crashBetweenCommitAndAnswer(t, { DATA_DIR: join(dir, 'data') });
});

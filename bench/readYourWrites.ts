// npm run bench -- read-your-writes [--pairs 1000]: on a private primary and streaming replica
// (lib/instances), how often a pet created through one instance is missing when read at once:
// (1) from the replica alone (a service without read-your-writes), (2) through another instance
// of the service (replica first, a miss asked again on the primary). See docs/scaling.md.
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { startPostgres, startReplica, waitForReplay, waitUntil } from '../lib/instances/index.js';
import { buildApp } from '../src/app.js';
import { generateApiKey, toStoredKey } from '../src/auth/keys.js';
import { loadConfig } from '../src/config/load.js';
import { insertApiKey } from '../src/db/apiKeys.js';
import { openDatabase, type Database } from '../src/db/index.js';
import { migrate } from '../src/db/migrations.js';
import { findPetById } from '../src/db/pets.js';
import { fmt, median } from './lib.js';

const { values: flags } = parseArgs({ options: { pairs: { type: 'string', default: '1000' } } });
const pairs = Number(flags.pairs);
const log = (line: string) => process.stderr.write(`${line}\n`);

const config = { ...loadConfig({}), LOG_LEVEL: 'silent' as const, RATE_LIMIT_MAX: 1_000_000, API_KEY_CACHE_SECONDS: 5 };

async function instance(
  primaryUrl: string,
  replicaUrl: string,
): Promise<{ db: Database; app: FastifyInstance; origin: string }> {
  const db = await openDatabase({
    url: primaryUrl,
    poolSize: 5,
    replicas: { urls: [replicaUrl], maxLagSeconds: 5, checkIntervalMs: 200 },
  });
  const app = await buildApp(config, { db, logger: false });
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  await waitUntil({ what: 'the instance reading from the replica', timeoutMs: 30_000 }, async () =>
    db.readStatus().reads === 'replicas' ? true : undefined,
  );
  return { db, app, origin };
}

async function main(): Promise<void> {
  const primary = await startPostgres();
  const replica = await startReplica(primary).catch(async (error: unknown) => {
    await primary.remove();
    throw error;
  });
  try {
    await primary.query('CREATE DATABASE pets');
    const setup = await openDatabase({ url: primary.url('pets'), poolSize: 1 });
    await migrate(setup);
    const key = generateApiKey();
    await insertApiKey(setup, toStoredKey('bench', key));
    await setup.close();
    await waitForReplay(primary, replica);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const writer = await instance(primary.url('pets'), replica.url('pets'));
    const reader = await instance(primary.url('pets'), replica.url('pets'));
    const replicaOnly = await openDatabase({ url: replica.url('pets'), poolSize: 1 });
    const create = async () => {
      const response = await fetch(`${writer.origin}/v1/pets`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'ryw', categoryId: 1 }),
      });
      if (response.status !== 201) throw new Error(`POST answered ${response.status}`);
      return ((await response.json()) as { id: number }).id;
    };
    try {
      let replicaMisses = 0;
      const visibleAfterMs: number[] = [];
      for (let pair = 0; pair < pairs; pair += 1) {
        const id = await create();
        const created = performance.now();
        if (!(await findPetById(replicaOnly, id))) {
          replicaMisses += 1;
          while (!(await findPetById(replicaOnly, id))) await sleep(1);
          visibleAfterMs.push(performance.now() - created);
        }
      }
      const loadAfterReplica = loadavg()
        .map((value) => fmt(value, 1))
        .join(' ');
      let serviceMisses = 0;
      for (let pair = 0; pair < pairs; pair += 1) {
        const id = await create();
        const response = await fetch(`${reader.origin}/v1/pets/${id}`, { headers });
        await response.arrayBuffer();
        if (response.status !== 200) serviceMisses += 1;
      }
      const loadAfterService = loadavg()
        .map((value) => fmt(value, 1))
        .join(' ');
      process.stdout.write(
        [
          `Private PostgreSQL 15 primary and streaming replica on this host; ${pairs} POSTs through one instance, each read at once:`,
          `- from the replica alone (no read-your-writes): ${replicaMisses} of ${pairs} missing` +
            (visibleAfterMs.length
              ? ` (visible after a median ${fmt(median(visibleAfterMs), 1)} ms, at most ${fmt(Math.max(...visibleAfterMs), 1)} ms)`
              : '') +
            `; load ${loadAfterReplica}`,
          `- GET /v1/pets/{id} through another instance (replica, then the primary on a miss): ${serviceMisses} of ${pairs} not 200; load ${loadAfterService}`,
          '',
        ].join('\n'),
      );
    } finally {
      await replicaOnly.close();
      for (const { app, db } of [writer, reader]) {
        await app.close();
        await db.close();
      }
    }
  } finally {
    await replica.remove();
    await primary.remove();
  }
}

await main();
log('done');

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startService } from '../../lib/instances/index.js';
import { apiKey, createPet, listAll, privatePostgres, waitFor } from './harness.js';

// The built server (npm run test:system -- faults builds it) in its own process, so that it can be killed.
const rounds = 2;

async function killUnderWriteLoad(t: Test, env: Record<string, string>): Promise<void> {
  const service = await startService({
    env: { ...env, BOOTSTRAP_API_KEY: apiKey, RATE_LIMIT_MAX: '1000000', LOG_LEVEL: 'warn', DRAIN_DELAY_MS: '0' },
    readyTimeoutMs: 120_000,
  });
  t.teardown(() => service.remove());
  const api = `${service.origin}/v1`;
  const acknowledged = new Set<number>();
  for (let round = 0; round < rounds; round += 1) {
    let writing = true;
    const before = acknowledged.size;
    const writer = async (id: number) => {
      for (let n = 0; writing && n < 100_000; n += 1) {
        const answer = await createPet(api, `k${round}-${id}-${n}`);
        if (answer.status === 201 && typeof answer.body.id === 'number') acknowledged.add(answer.body.id);
      }
    };
    const writers = [0, 1, 2, 3, 4, 5].map(writer);
    await waitFor('writes before the kill', 60_000, () => Promise.resolve(acknowledged.size >= before + 40));
    await service.kill();
    writing = false;
    await Promise.all(writers);
    await service.restart();
  }
  const ids = (await listAll(api)).map((pet) => pet.id);
  t.equal(new Set(ids).size, ids.length, 'paging shows no pet twice');
  t.same(
    [...acknowledged].filter((id) => !ids.includes(id)),
    [],
    `all ${acknowledged.size} pets acknowledged over ${rounds} kill -9 are there`,
  );
}

t.test('kill -9 under write load, PostgreSQL: every acknowledged pet is there', async (t) => {
  const { url } = await privatePostgres(t);
  await killUnderWriteLoad(t, { DATABASE_URL: url, MIGRATE_ON_START: 'true' });
});

t.test('kill -9 under write load, embedded database: every acknowledged pet is there', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pets-kill-'));
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  await killUnderWriteLoad(t, { DATA_DIR: join(dir, 'data') });
});

import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { call, createPet, listAll, privatePostgres, serve, waitFor, type Answer } from './harness.js';

t.test('started before its database: /healthz 200, /readyz 503, then ready once the database is up', async (t) => {
  const { pg, url } = await privatePostgres(t);
  await pg.stop();
  let listening: (address: string) => void = () => undefined;
  const address = new Promise<string>((resolve) => (listening = resolve));
  const starting = serve(
    t,
    { DATABASE_URL: url, MIGRATE_ON_START: 'true', DATABASE_STARTUP_TIMEOUT_MS: '60000' },
    {
      onListening: (at) => {
        listening(at);
      },
    },
  );
  const origin = await address;
  t.equal((await call(`${origin}/healthz`)).status, 200, '/healthz answers while waiting');
  t.match(await call(`${origin}/readyz`), { status: 503, body: { code: 'service_unavailable', status: 503 } });
  await pg.restart();
  const server = await starting;
  t.equal((await call(`${origin}/readyz`)).status, 200, 'ready without a restart of the service');
  t.equal((await createPet(server.api, 'after start')).status, 201);
});

t.test('PostgreSQL restart and stop/start mid-traffic: only 503 Error objects, recovery without restart', async (t) => {
  const { pg, url } = await privatePostgres(t);
  const server = await serve(t, { DATABASE_URL: url, MIGRATE_ON_START: 'true', DATABASE_POOL_SIZE: '4' });
  const answers: Answer[] = [];
  const acknowledged = new Set<number>();
  let writing = true;
  const writer = async (id: number) => {
    for (let n = 0; writing && n < 100_000; n += 1) {
      const answer = await createPet(server.api, `w${id}-${n}`);
      answers.push(answer);
      if (answer.status === 201 && typeof answer.body.id === 'number') acknowledged.add(answer.body.id);
      else await sleep(20);
    }
  };
  const writers = [0, 1, 2, 3].map(writer);
  const ackedSoFar = (at: number) =>
    waitFor(`${at} pets acknowledged`, 60_000, () => Promise.resolve(acknowledged.size >= at));

  await ackedSoFar(50);
  await pg.stop();
  await pg.restart();
  await ackedSoFar(acknowledged.size + 50);
  await pg.stop();
  // Down until the writers have met the outage: a condition, not a duration.
  const failedBefore = answers.filter((answer) => answer.status !== 201).length;
  await waitFor('the writers saw the second outage', 60_000, () =>
    Promise.resolve(answers.filter((answer) => answer.status !== 201).length >= failedBefore + 8),
  );
  await pg.restart();
  await ackedSoFar(acknowledged.size + 50);
  writing = false;
  await Promise.all(writers);

  const failures = answers.filter((answer) => answer.status !== 201);
  t.ok(failures.length > 0, `the outages were seen (${failures.length} of ${answers.length} answers failed)`);
  const notErrorObjects = failures.filter(
    (answer) => answer.status !== 503 || answer.body.code !== 'service_unavailable' || answer.body.status !== 503,
  );
  t.same(notErrorObjects.slice(0, 5), [], 'every failure is a 503 Error object');
  const listed = await listAll(server.api);
  const ids = listed.map((pet) => pet.id);
  t.equal(new Set(ids).size, ids.length, 'paging shows no pet twice');
  const missing = [...acknowledged].filter((id) => !ids.includes(id));
  t.same(missing, [], `every acknowledged pet is there (${acknowledged.size})`);
});

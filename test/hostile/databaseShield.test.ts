import t from 'tap';
import { generateApiKey } from '../../src/auth/keys.js';
import type { Statement } from '../../src/db/types.js';
import { forEachBackend } from '../helpers/app.js';
import { interceptQueries, startHostileApp } from './harness.js';

/** A database wrapper that counts the statements reaching it, by name. */
function queryCounter() {
  let seen: string[] = [];
  return {
    reset: () => {
      seen = [];
    },
    wrap: interceptQueries((statement: Statement, run) => {
      seen.push(statement.name ?? statement.text);
      return run();
    }),
    count: (name?: string) => (name === undefined ? seen.length : seen.filter((seenName) => seenName === name).length),
  };
}

const limit = 10;
const flood = 60;
const keyLookUp = 'api_keys.active_by_hash';
const shieldConfig = { RATE_LIMIT_MAX: limit, RATE_LIMIT_WINDOW_SECONDS: 600, API_KEY_CACHE_SECONDS: 60 };

void forEachBackend(t, async (t, backend) => {
  const counter = queryCounter();
  const h = await startHostileApp(t, shieldConfig, backend, counter.wrap);
  let client = 0;
  /** Requests from a client address of its own, so each test starts with a fresh address quota. */
  function fromNewClient() {
    client += 1;
    const remoteAddress = `192.0.2.${client}`;
    return (headers: Record<string, string>, url = '/v1/pets') =>
      h.app.inject({ method: 'GET', url, headers, remoteAddress });
  }
  await t.test('a flood of one wrong key costs one query', async (t) => {
    const send = fromNewClient();
    counter.reset();
    const wrong = { authorization: `Bearer ${generateApiKey()}` };
    const first = await Promise.all(Array.from({ length: limit / 2 }, () => send(wrong)));
    t.same(
      first.map((response) => response.statusCode),
      Array<number>(limit / 2).fill(401),
    );
    t.equal(counter.count(keyLookUp), 1, 'concurrent requests with one key share its look-up');
    const statuses: number[] = [];
    for (let index = 0; index < limit; index += 1) {
      statuses.push((await send(wrong)).statusCode);
    }
    t.same(statuses, [...Array<number>(limit / 2).fill(401), ...Array<number>(limit / 2).fill(429)]);
    t.equal(counter.count(keyLookUp), 1, 'a refused key is remembered');
    const flooded = await Promise.all(Array.from({ length: flood }, () => send(wrong)));
    t.ok(
      flooded.every((response) => response.statusCode === 429),
      'past the limit, 429',
    );
    t.equal(counter.count(), 1, 'nothing else reached the database');
  });

  await t.test('a flood of distinct wrong keys past the limit costs no query', async (t) => {
    const send = fromNewClient();
    counter.reset();
    const guess = () => send({ authorization: `Bearer ${generateApiKey()}` });
    const statuses: number[] = [];
    for (let index = 0; index <= limit; index += 1) statuses.push((await guess()).statusCode);
    t.same(statuses, [...Array<number>(limit).fill(401), 429], 'the address has its attempts, then 429');
    t.equal(counter.count(keyLookUp), limit, 'one look-up per attempt the address had');

    const flooded = await Promise.all(Array.from({ length: flood }, guess));
    t.ok(
      flooded.every((response) => response.statusCode === 429),
      'past the limit, 429',
    );
    t.equal(counter.count(keyLookUp), limit, 'an address over its limit is refused before any look-up');
    t.equal(counter.count(), limit, 'nothing else reached the database');

    const valid = await send({ authorization: `Bearer ${h.key}` });
    t.equal(valid.statusCode, 429, 'a key the service does not remember is not looked up from that address either');
  });

  await t.test('a key accepted before still works from an address out of attempts', async (t) => {
    const send = fromNewClient();
    const valid = { authorization: `Bearer ${h.key}` };
    t.equal((await send(valid)).statusCode, 200);
    for (let attempt = 0; attempt <= limit; attempt += 1) {
      await send({ authorization: `Bearer ${generateApiKey()}` });
    }
    t.equal((await send(valid)).statusCode, 200);
  });

  await t.test('a /readyz flood costs one database probe a second', async (t) => {
    const send = fromNewClient();
    counter.reset();
    const started = Date.now();
    t.equal((await send({}, '/readyz')).statusCode, 200);
    const perProbe = counter.count();
    t.ok(perProbe >= 1, `one probe is ${perProbe} statement(s)`);
    const requests = 300;
    const concurrent = await Promise.all(Array.from({ length: requests / 2 }, () => send({}, '/readyz')));
    for (let index = 0; index < requests / 2; index += 1) {
      concurrent.push(await send({}, '/readyz'));
    }
    t.ok(
      concurrent.every((response) => response.statusCode === 200),
      'every probe answered',
    );
    // Elapsed time bounds the number of probes (one per second, plus the first).
    const probes = Math.floor((Date.now() - started) / 1000) + 2;
    t.ok(
      counter.count() <= probes * perProbe,
      `${requests + 1} requests made ${counter.count()} statements (at most ${probes} probes of ${perProbe})`,
    );
  });
});

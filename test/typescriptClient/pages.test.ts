import t, { type Test } from 'tap';
import { PetStore, PetStoreError, type Pet, type PetStatus } from '../../clients/typescript/src/index.js';
import { startRewritingProxy } from '../helpers/httpProxy.js';
import { recordingFetch, serveApp, type ServedApp } from '../helpers/typescriptClient.js';

// 250 pets: three in four available (188, two pages of pets()), the rest pending (62, one page).
const seedSql = `INSERT INTO pets (name, category_id, status)
  SELECT 'walker-' || n, 1 + n % 5, CASE WHEN n % 4 = 0 THEN 'pending' ELSE 'available' END
  FROM generate_series(1, 250) AS n`;

/** The service with the 250 pets; read, never written, by the tests below. */
async function seeded(t: Test): Promise<ServedApp & { all: Pet[] }> {
  const served = await serveApp(t);
  await served.db.query({ text: seedSql });
  const { rows } = await served.db.query<{ id: string; name: string; category_id: string; status: PetStatus }>({
    text: 'SELECT id, name, category_id, status FROM pets ORDER BY id',
  });
  const all = rows.map((row) => ({
    id: Number(row.id),
    name: row.name,
    categoryId: Number(row.category_id),
    status: row.status,
  }));
  return { ...served, all };
}

const seededApp = await seeded(t);

async function collect(pets: AsyncIterable<Pet>): Promise<Pet[]> {
  const seen: Pet[] = [];
  for await (const pet of pets) seen.push(pet);
  return seen;
}

t.test('pets() walks every page and sees each pet once, with and without a status filter', async (t) => {
  const { baseUrl, key, all } = seededApp;
  t.equal(all.length, 250);
  const { fetch, sent } = recordingFetch();
  const client = new PetStore({ baseUrl, apiKey: key, fetch });

  t.same(await collect(client.pets()), all, 'all 250, each once, in id order');
  t.equal(sent.length, 3, 'three pages of 100, 100 and 50, and no request past the last');

  for (const status of ['available', 'pending'] as const) {
    sent.length = 0;
    const expected = all.filter((pet) => pet.status === status);
    t.same(await collect(client.pets({ status })), expected, `the ${expected.length} ${status} ones, each once`);
    t.ok(
      sent.every((entry) => new URL(entry.url).searchParams.get('status') === status),
      'every page filtered',
    );
    t.equal(sent.length, Math.ceil(expected.length / 100), `${sent.length} pages`);
  }
});

t.test('listPets() is one page: a limit, a status, or ids', async (t) => {
  const { baseUrl, key, all } = seededApp;
  const client = new PetStore({ baseUrl, apiKey: key });
  t.same(await client.listPets(), all.slice(0, 20), "the service's default page");
  t.same(
    await client.listPets({ limit: 5, status: 'pending' }),
    all.filter((pet) => pet.status === 'pending').slice(0, 5),
  );
  const [first, , third] = all;
  t.same(await client.listPets({ id: [third!.id, first!.id, 999_999] }), [first, third], 'those that exist, by id');
});

t.test('a next link to another origin is refused, and the key never leaves', async (t) => {
  const { origin, key } = seededApp;
  for (const elsewhere of ['http://evil.example.com', '//evil.example.com', 'https://127.0.0.1']) {
    const proxy = await startRewritingProxy(origin, (response) => ({
      ...response,
      headers: { ...response.headers, link: (response.headers['link'] ?? '').replace('</v1/', `<${elsewhere}/v1/`) },
    }));
    t.teardown(proxy.close);
    const { fetch, sent } = recordingFetch();
    const client = new PetStore({ baseUrl: `${proxy.url}/v1`, apiKey: key, fetch });
    const seen: Pet[] = [];
    const walk = async () => {
      for await (const pet of client.pets()) seen.push(pet);
    };
    const error = await walk().then(
      () => undefined,
      (error: unknown) => error,
    );
    t.ok(error instanceof PetStoreError, `a next link to ${elsewhere} is refused`);
    t.match(error, { code: 'unexpected_response', message: /another origin/ });
    t.equal(seen.length, 0, 'on the page that carried it (an answer that breaks the contract is not used)');
    t.equal(sent.length, 1, 'no request went anywhere else');
  }
});

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { repoRoot } from '../../lib/repoRoot.js';
import { generateClient, scriptedFetch, unavailable, type ScriptedAnswer } from '../helpers/typescriptClient.js';

// The client's methods as `npm run generate` makes them for operations the contract does not have yet: a
// fixture spec (openapi.yaml plus a DELETE, a PUT under a required If-Match, a PATCH of merge-patch+json
// and a POST without Idempotency-Key) run through openapi-typescript and generators/client.ts into a
// scratch copy of the package, whose hand-written files are this tree's (generateClient). Its methods must
// exist, typed from the operations (tsc), and retry by HTTP semantics.

const errors = (...statuses: string[]) =>
  Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        $ref: `#/components/responses/${{ '400': 'BadRequest', '401': 'Unauthorized', '404': 'NotFound', '503': 'ServiceUnavailable' }[status]}`,
      },
    ]),
  );
const petBody = {
  required: true,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPet' } } },
};
const petAnswer = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
});
const sunset = '2031-01-01T00:00:00Z';

/** openapi.yaml with four operations more on /pets/{petId} and /pets/{petId}/adoption. */
function fixtureSpec(): object {
  const spec = parse(readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8')) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const petId = { $ref: '#/components/parameters/PetId' };
  const item = spec.paths['/pets/{petId}'];
  if (item === undefined) throw new Error('openapi.yaml has no /pets/{petId}');
  item['delete'] = {
    operationId: 'deletePet',
    summary: 'Remove an animal',
    parameters: [petId],
    responses: { '204': { description: 'Removed.' }, ...errors('400', '401', '404', '503') },
  };
  item['put'] = {
    operationId: 'replacePet',
    summary: 'Replace an animal',
    deprecated: true,
    'x-sunset': sunset,
    'x-replacement': { operationId: 'updatePet' },
    parameters: [petId, { name: 'If-Match', in: 'header', required: true, schema: { type: 'string' } }],
    requestBody: petBody,
    responses: { '200': petAnswer('Replaced.'), ...errors('400', '401', '404', '503') },
  };
  item['patch'] = {
    operationId: 'updatePet',
    summary: 'Change an animal',
    parameters: [
      petId,
      { name: 'If-Match', in: 'header', required: false, schema: { type: 'string', maxLength: 2048 } },
      { name: 'X-Dry-Run', in: 'header', required: false, schema: { type: 'boolean' } },
    ],
    requestBody: {
      required: true,
      content: {
        'application/merge-patch+json': {
          schema: { type: 'object', properties: { name: { $ref: '#/components/schemas/PetName' } } },
        },
      },
    },
    responses: { '200': petAnswer('Changed.'), ...errors('400', '401', '404', '503') },
  };
  spec.paths['/pets/{petId}/adoption'] = {
    post: {
      operationId: 'adoptPet',
      summary: 'Adopt an animal',
      parameters: [petId],
      responses: { '201': petAnswer('Adopted.'), ...errors('400', '401', '404', '503') },
    },
  };
  return spec;
}

// Type-checked in the scratch package: each new operation's method exists, typed from `operations`.
const fixtureUse = `import { PetStore, type Pet } from './index.js';

const store = new PetStore({ baseUrl: 'https://api.petstore.example.com/v1', apiKey: 'k' });
export const deleted: Promise<void> = store.deletePet(7);
export const updated: Promise<Pet> = store.updatePet(7, { name: 'Rex' }, { signal: AbortSignal.timeout(1000) });
export const replaced: Promise<Pet> = store.replacePet(7, { name: 'Rex', categoryId: 3 }, { headers: { 'If-Match': '"v1"' } });
// @ts-expect-error replacePet's If-Match is required
export const unconditional = store.replacePet(7, { name: 'Rex', categoryId: 3 });
export const adopted: Promise<Pet> = store.adoptPet(7);
// @ts-expect-error deletePet resolves with nothing
export const notAPet: Promise<Pet> = store.deletePet(7);
// @ts-expect-error the petId is a number
export const wrongId = store.deletePet('7');
// @ts-expect-error updatePet takes its body after the petId
export const noBody = store.updatePet(7);
// @ts-expect-error a body's fields are the schema's
export const wrongField = store.updatePet(7, { nickname: 'Rex' });
export const conditional: Promise<Pet> = store.updatePet(7, { name: 'Rex' }, { ifMatch: '"v1"', xDryRun: true });
// @ts-expect-error an optional header is typed from its schema
export const wrongTag = store.updatePet(7, { name: 'Rex' }, { ifMatch: 1 });
// @ts-expect-error deletePet declares no If-Match
export const notDeclared = store.deletePet(7, { ifMatch: '"v1"' });
// @ts-expect-error adoptPet declares no Idempotency-Key, so it takes no key
export const keyed = store.adoptPet(7, { idempotencyKey: 'k' });
`;

const fixture = await generateClient(t, fixtureSpec());
const generated = fixture.operations;

t.test('the generated methods of new operations compile, typed from the operations, and misuse does not', async (t) => {
  writeFileSync(join(fixture.dir, 'src/fixtureUse.ts'), fixtureUse);
  t.equal(await fixture.typecheck(), '', 'tsc: no error, and every @ts-expect-error met its error');
  t.match(generated, /deletePet\(\s*petId: [^,]+,\s*options: CallOptions = \{\},?\s*\): CallPromise<DeletePetResult>/);
  t.match(
    generated,
    /updatePet\(\s*petId: [^,]+,\s*body: [^,]+,\s*options: UpdatePetOptions = \{\},?\s*\): CallPromise<UpdatePetResult>/,
  );
});

t.test('a deprecated operation is @deprecated with its sunset and replacement', async (t) => {
  const replaceDoc = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*replacePet\(/.exec(generated)?.[1] ?? '';
  t.match(replaceDoc, `@deprecated The service removes it at its sunset (${new Date(sunset).toUTCString()})`);
  t.match(replaceDoc, 'Use `updatePet` instead');
  const deleteDoc = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*deletePet\(/.exec(generated)?.[1] ?? '';
  t.notMatch(deleteDoc, '@deprecated', 'only there');
});

const { PetStore, PetStoreError } = await fixture.load();
const pet = { id: 7, name: 'Rex', categoryId: 3, status: 'available' };

/** A client of the fixture's package on a scripted fetch; calls an operation by name with its arguments. */
function client(script: ScriptedAnswer[]) {
  const scripted = scriptedFetch(script);
  const store = new PetStore({ baseUrl: 'https://pets.test/v1', apiKey: 'k', fetch: scripted.fetch });
  const call = (method: string, ...args: unknown[]) =>
    (store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[method]!(...args);
  return { call, requests: scripted.requests };
}

t.test('DELETE and PUT are idempotent: retried after a 503 and after a lost connection', async (t) => {
  for (const lost of [unavailable, 'connection lost'] as const) {
    const deleting = client([lost, { status: 204 }]);
    t.equal(await deleting.call('deletePet', 7), undefined, 'deletePet resolves with nothing');
    t.same(
      deleting.requests.map(({ method, url }) => `${method} ${url}`),
      ['DELETE https://pets.test/v1/pets/7', 'DELETE https://pets.test/v1/pets/7'],
    );
    const replacing = client([lost, { status: 200, body: pet }]);
    t.same(
      await replacing.call('replacePet', 7, { name: 'Rex', categoryId: 3 }, { headers: { 'If-Match': '"v1"' } }),
      pet,
    );
    t.equal(replacing.requests.length, 2, 'PUT sent again');
    t.same(
      replacing.requests.map(({ headers }) => headers.get('if-match')),
      ['"v1"', '"v1"'],
      'with its required header',
    );
    t.equal(replacing.requests[1]!.body, '{"name":"Rex","categoryId":3}', 'with the same body');
  }
});

t.test('optional header parameters are sent from their options, only when given', async (t) => {
  const updating = client([{ status: 200, body: pet }]);
  await updating.call('updatePet', 7, { name: 'Rex' }, { ifMatch: '"v1"', xDryRun: false });
  t.equal(updating.requests[0]!.headers.get('if-match'), '"v1"');
  t.equal(updating.requests[0]!.headers.get('x-dry-run'), 'false');
  const plain = client([{ status: 200, body: pet }]);
  await plain.call('updatePet', 7, { name: 'Rex' });
  t.equal(plain.requests[0]!.headers.get('if-match'), null);
});

t.test('PATCH and POST without a declared Idempotency-Key are never sent twice', async (t) => {
  for (const [method, args] of [
    ['updatePet', [7, { name: 'Rex' }]],
    ['adoptPet', [7]],
  ] as const) {
    const refused = client([unavailable, { status: 200, body: pet }]);
    const error = await refused.call(method, ...args).catch((error: unknown) => error);
    t.ok(error instanceof PetStoreError && error.status === 503, `${method}: the 503 is thrown`);
    t.equal(refused.requests.length, 1, `${method}: not retried after a 503`);
    t.equal(refused.requests[0]!.headers.get('idempotency-key'), null, 'and sent without a key');
    if (method === 'updatePet')
      t.equal(refused.requests[0]!.headers.get('content-type'), 'application/merge-patch+json', 'as its media type');
    const lost = client(['connection lost', { status: 200, body: pet }]);
    await t.rejects(lost.call(method, ...args), TypeError, `${method}: the lost connection is thrown`);
    t.equal(lost.requests.length, 1, `${method}: not retried after a lost connection`);
  }
});

t.test('a POST that declares Idempotency-Key is retried, its key the same on every attempt', async (t) => {
  const creating = client([unavailable, 'connection lost', { status: 201, body: pet }]);
  t.same(await creating.call('createPet', { name: 'Rex', categoryId: 3 }), pet);
  const keys = creating.requests.map(({ headers }) => headers.get('idempotency-key'));
  t.equal(keys.length, 3, 'two retries');
  t.match(keys[0], /^[0-9a-f-]{36}$/, 'a generated key');
  t.same(new Set(keys).size, 1, 'sent unchanged on every retry');
  const again = client([{ status: 201, body: pet }]);
  await again.call('createPet', { name: 'Rex', categoryId: 3 });
  t.not(again.requests[0]!.headers.get('idempotency-key'), keys[0], 'a new key for a new call');
});

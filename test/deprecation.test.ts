import t from 'tap';
import { loadOpenApiDocument, listOperations } from '../src/openapi/document.js';
import { deprecationHeadersOf, withDeprecationLink } from '../src/http/contract/deprecation.js';
import { forEachBackend, startTestApp } from './helpers/app.js';
import { matchesDeclaredHeader } from './helpers/contract.js';

const getPetSpec = listOperations(loadOpenApiDocument()).find(
  (entry) => entry.operation.operationId === 'getPet',
)?.operation;

t.test('getPet announces its deprecation from openapi.yaml', (t) =>
  forEachBackend(t, async (t, backend) => {
    const { app, auth } = await startTestApp(t, backend);
    const created = await app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: auth,
      payload: { name: 'Rex', categoryId: 3 },
    });
    t.equal(created.statusCode, 201);
    const found = await app.inject({ method: 'GET', url: created.headers.location as string, headers: auth });
    t.equal(found.statusCode, 200);
    t.equal(
      found.headers['deprecation'],
      `@${Date.parse(String(getPetSpec?.['x-deprecated-at'])) / 1000}`,
      'Deprecation is @<unix seconds> of x-deprecated-at',
    );
    t.equal(found.headers['deprecation'], '@1795219200');
    t.equal(found.headers['sunset'], 'Thu, 05 Dec 2030 00:00:00 GMT', 'Sunset is the HTTP date of x-sunset');
    t.equal(
      found.headers['link'],
      `</v1/pets?id=${created.json().id}>; rel="successor-version", </docs#/pets/getPet>; rel="deprecation"`,
      'the successor link names the same animal',
    );
    for (const [header, declared] of [
      ['deprecation', 'Deprecation'],
      ['sunset', 'Sunset'],
      ['link', 'DeprecationLink'],
    ] as const) {
      t.ok(matchesDeclaredHeader(declared, found.headers[header]), `${header} matches its declaration in openapi.yaml`);
    }

    // The successor link works with the same key.
    const successor = /^<([^>]+)>; rel="successor-version"/.exec(String(found.headers['link']))?.[1] ?? '';
    const replacement = await app.inject({ method: 'GET', url: successor, headers: auth });
    t.equal(replacement.statusCode, 200);
    t.same(replacement.json(), [found.json()], 'the replacement answers the same animal');

    const missing = await app.inject({ method: 'GET', url: '/v1/pets/999999', headers: auth });
    t.equal(missing.statusCode, 404);
    t.equal(missing.headers['deprecation'], '@1795219200', 'error responses of the operation say it too');
    const refused = await app.inject({ method: 'GET', url: created.headers.location as string });
    t.equal(refused.statusCode, 401);
    t.equal(refused.headers['deprecation'], '@1795219200', 'so do answers refused before the handler runs');

    const list = await app.inject({ method: 'GET', url: '/v1/pets', headers: auth });
    t.equal(list.headers['deprecation'], undefined, 'operations that are not deprecated carry no Deprecation');
    t.equal(list.headers['sunset'], undefined);
    const create = await app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: auth,
      payload: { name: 'Tom', categoryId: 4 },
    });
    t.equal(create.headers['deprecation'], undefined);
  }),
);

// The hook is generic: any operation marked in the spec gets the headers.
t.test('deprecating an operation is one edit in the spec', async (t) => {
  const operation = {
    operationId: 'listPets',
    deprecated: true,
    'x-deprecated-at': '2027-01-01T00:00:00Z',
    'x-sunset': '2028-06-30T12:00:00Z',
    'x-replacement': { href: '/v2/pets' },
    responses: { '200': { headers: { Deprecation: {}, Sunset: {}, Link: {} } } },
  };
  t.same(deprecationHeadersOf(operation), {
    deprecation: '@1798761600',
    sunset: 'Fri, 30 Jun 2028 12:00:00 GMT',
    link: '</v2/pets>; rel="successor-version"',
  });
  t.same(deprecationHeadersOf({ operationId: 'createPet' }), undefined);
  t.throws(() => deprecationHeadersOf({ ...operation, 'x-sunset': 'soon' }), /x-sunset "soon"/);
  t.throws(
    () => deprecationHeadersOf({ ...operation, responses: { '200': { headers: {} } } }),
    /does not declare Deprecation, Sunset, Link/,
  );
  t.throws(
    () => deprecationHeadersOf({ operationId: 'createPet', 'x-sunset': '2030-01-01T00:00:00Z' }),
    /not deprecated: true/,
  );
  t.throws(
    () => deprecationHeadersOf({ ...operation, 'x-replacement': { href: 'https://elsewhere.example/x' } }),
    /expected a path/,
  );
});

t.test("a handler's own Link comes first, the deprecation's after it", async (t) => {
  const deprecation = { deprecation: '@1', link: '</docs>; rel="deprecation"' };
  t.same(withDeprecationLink({ Link: '</v1/pets?cursor=x>; rel="next"', Location: '/x' }, deprecation), {
    Link: '</v1/pets?cursor=x>; rel="next", </docs>; rel="deprecation"',
    Location: '/x',
  });
  t.same(withDeprecationLink({ Location: '/x' }, deprecation), { Location: '/x' }, 'set on arrival already');
  t.same(withDeprecationLink({ Link: '<a>' }, undefined), { Link: '<a>' });
});

import t from 'tap';
import { loadOpenApiDocument, listOperations } from '../../src/openapi/document.js';
import { deprecationHeadersOf, withDeprecationLink } from '../../src/http/operations/deprecation.js';
import { forEachBackend, startTestApp } from '../helpers/app.js';
import { matchesDeclaredHeader } from '../helpers/contract.js';

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

t.test('from the instant of its x-sunset on, getPet answers 410 Gone; before it nothing changes', (t) =>
  forEachBackend(t, async (t, backend) => {
    const sunset = Date.parse(String(getPetSpec?.['x-sunset']));
    t.equal(new Date(sunset).toISOString(), '2030-12-05T00:00:00.000Z', 'the sunset the seed announced');
    let clock = sunset - 1;
    const { app, auth } = await startTestApp(t, backend, {}, { now: () => clock });
    const created = await app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: auth,
      payload: { name: 'Rex', categoryId: 3 },
    });
    const location = created.headers.location as string;
    const before = await app.inject({ method: 'GET', url: location, headers: auth });
    t.equal(before.statusCode, 200, 'a millisecond before the sunset getPet still answers');
    t.same(before.json(), created.json());

    clock = sunset;
    const gone = await app.inject({ method: 'GET', url: location, headers: auth });
    t.equal(gone.statusCode, 410, 'at the sunset instant getPet is gone');
    t.same(gone.json(), {
      code: 'gone',
      message: 'getPet was removed on Thu, 05 Dec 2030 00:00:00 GMT; use the replacement its Link header names.',
      status: 410,
    });
    t.match(gone.headers['content-type'], /^application\/json/);
    t.equal(gone.headers['sunset'], 'Thu, 05 Dec 2030 00:00:00 GMT');
    t.equal(gone.headers['deprecation'], '@1795219200');
    t.equal(
      gone.headers['link'],
      `</v1/pets?id=${created.json().id}>; rel="successor-version", </docs#/pets/getPet>; rel="deprecation"`,
      'the 410 names the successor for the same animal',
    );
    t.ok(gone.headers['x-request-id']);
    const successor = /^<([^>]+)>/.exec(String(gone.headers['link']))?.[1] ?? '';
    const replacement = await app.inject({ method: 'GET', url: successor, headers: auth });
    t.same(replacement.json(), [created.json()], 'and the successor answers it');

    clock = sunset + 365 * 24 * 3600 * 1000;
    for (const url of ['/v1/pets/999999', '/v1/pets/not-a-number'])
      t.equal((await app.inject({ method: 'GET', url, headers: auth })).statusCode, 410, `${url}: 410 too`);
    const anonymous = await app.inject({ method: 'GET', url: location });
    t.equal(anonymous.statusCode, 401, 'authentication still comes first');
    const list = await app.inject({ method: 'GET', url: '/v1/pets', headers: auth });
    t.equal(list.statusCode, 200, 'operations without a sunset are untouched');
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
    responses: {
      '200': { headers: { Deprecation: {}, Sunset: {}, Link: {} } },
      '410': { headers: { Deprecation: {}, Sunset: {}, Link: {} } },
    },
  };
  t.same(deprecationHeadersOf(operation), {
    deprecation: '@1798761600',
    sunset: 'Fri, 30 Jun 2028 12:00:00 GMT',
    link: '</v2/pets>; rel="successor-version"',
  });
  t.same(deprecationHeadersOf({ operationId: 'createPet' }), undefined);
  t.throws(() => deprecationHeadersOf({ ...operation, 'x-sunset': 'soon' }), /x-sunset "soon"/);
  t.throws(
    () => deprecationHeadersOf({ ...operation, responses: { ...operation.responses, '200': { headers: {} } } }),
    /its 200 response does not declare Deprecation, Sunset, Link/,
  );
  t.throws(
    () => deprecationHeadersOf({ ...operation, responses: { ...operation.responses, '410': { headers: {} } } }),
    /its 410 response does not declare Deprecation, Sunset, Link/,
  );
  t.throws(
    () => deprecationHeadersOf({ ...operation, responses: { '200': operation.responses['200'] } }),
    /has x-sunset but declares no 410 response/,
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

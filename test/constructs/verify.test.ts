import fc from 'fast-check';
import t, { type Test } from 'tap';
import { loadContract } from '../../lib/conformance/spec.js';
import type { TestRequest } from '../../lib/conformance/checks.js';
import { validCases } from '../../lib/conformance/requests.js';
import { Exchanger } from '../../scripts/verify/exchange.js';
import { Findings } from '../../scripts/verify/findings.js';
import { runVerification } from '../../scripts/verify/verify.js';
import { PoliteClient, type OutgoingRequest } from '../../scripts/verify/http.js';
import { bytesService } from '../helpers/bytesService.js';
import { constructExample } from '../helpers/constructExamples.js';

// `npm run verify`, each construct on the catalogue's example spec: one request through its Exchanger (the URL
// it builds, the curl line it prints) to a deployment that answers as the test says, and the failures it finds.

const key = 'k'.repeat(32);

interface Reply {
  status: number;
  headers?: Record<string, string>;
  json?: unknown;
  /** A body as bytes, sent with the headers given. */
  bytes?: Uint8Array;
}

const sent = (exchanged: { sent: OutgoingRequest[] }) => exchanged.sent[0]?.headers ?? {};

async function exchange(id: string, reply: Reply, request: Partial<TestRequest> = {}, expect?: number[]) {
  const [operation] = loadContract(constructExample(id)).operations;
  const sent: OutgoingRequest[] = [];
  const client = {
    send: (outgoing: OutgoingRequest) => {
      sent.push(outgoing);
      const bytes = reply.bytes ?? new TextEncoder().encode(reply.json === undefined ? '' : JSON.stringify(reply.json));
      const text = new TextDecoder().decode(bytes);
      const headers = { ...(reply.json === undefined ? {} : { 'content-type': 'application/json' }), ...reply.headers };
      return Promise.resolve({ status: reply.status, headers: new Headers(headers), text, bytes });
    },
  } as unknown as PoliteClient;
  const findings = new Findings();
  const exchanger = new Exchanger(new URL('http://deployment.test/v1'), client, findings, key, () => Date.now());
  const answer = await exchanger.send(
    operation!,
    {
      operationId: 'example',
      intent: 'valid',
      pathParams: {},
      query: [],
      headers: { authorization: `Bearer ${key}` },
      ...request,
    },
    expect === undefined ? {} : { expect },
  );
  return { sent, answer, failures: findings.failures.map((failure) => failure.check), findings };
}

t.test('media-json', async (t) => {
  t.same((await exchange('media-json', { status: 200, json: { name: 'a' } })).failures, []);
  const text = await exchange('media-json', { status: 200, headers: { 'content-type': 'text/plain' } });
  t.same(text.failures, ['wrong content type']);
});

t.test('media-json-suffix', async (t) => {
  const [operation] = loadContract(constructExample('media-json-suffix')).operations;
  const [drawn] = fc.sample(validCases(operation!, { key, bodyLimit: 65536 }), { numRuns: 1, seed: 1 });
  const suffixed = { 'content-type': 'application/vnd.example+json; charset=utf-8' };
  const { sent, failures, answer } = await exchange(
    'media-json-suffix',
    { status: 200, headers: suffixed, json: { name: 'a' } },
    drawn!.request,
  );
  t.match(sent[0]?.headers['content-type'], /^application\/merge-patch\+json/, 'the body sent as merge-patch+json');
  t.type(JSON.parse(String(sent[0]?.body)), 'object', 'as JSON text');
  t.same(failures, [], 'the +json answer read as JSON and valid');
  t.same(answer?.json, { name: 'a' });
  const outside = await exchange('media-json-suffix', { status: 200, headers: suffixed, json: { name: 1 } });
  t.same(outside.failures, ['body outside its schema'], 'and checked against its schema');
  const plain = await exchange('media-json-suffix', { status: 200, json: { name: 'a' } });
  t.same(plain.failures, ['wrong content type'], 'application/json is not the type the status declares');
});

t.test('param-path-simple', async (t) => {
  const { sent } = await exchange('param-path-simple', { status: 200 }, { pathParams: { id: 'a b/c' } });
  t.equal(sent[0]?.url, 'http://deployment.test/v1/things/a%20b%2Fc');
});

t.test('param-query-form', async (t) => {
  const query: [string, string][] = [
    ['tag', 'a'],
    ['tag', 'b'],
  ];
  const { sent } = await exchange('param-query-form', { status: 200 }, { query });
  t.equal(sent[0]?.url, 'http://deployment.test/v1/things?tag=a&tag=b');
});

t.test('param-header-simple', async (t) => {
  const headers = { authorization: `Bearer ${key}`, 'x-tag': 'hello' };
  const { sent, answer } = await exchange('param-header-simple', { status: 200 }, { headers });
  t.equal(sent[0]?.headers['x-tag'], 'hello');
  t.match(answer?.curl, "-H $'x-tag: hello'");
});

t.test('schema-closed-object', async (t) => {
  const extra = await exchange('schema-closed-object', { status: 200, json: { name: 'a', extra: 1 } });
  t.same(extra.failures, ['body outside its schema']);
});

t.test('response-created', async (t) => {
  t.same((await exchange('response-created', { status: 201, json: { name: 'a' } }, {}, [201])).failures, []);
  t.same((await exchange('response-created', { status: 200, json: { name: 'a' } }, {}, [201])).failures, [
    'undeclared status',
    'unexpected status',
  ]);
});

t.test('response-headers', async (t) => {
  t.same((await exchange('response-headers', { status: 201, headers: { location: '/v1/things/a' } })).failures, []);
  t.same((await exchange('response-headers', { status: 201 })).failures, ['required header missing']);
});

t.test('response-links', async (t) => {
  t.same((await exchange('response-links', { status: 200, json: { id: 'a' } })).failures, []);
});

t.test('servers-root', async (t) => {
  const { sent } = await exchange('servers-root', { status: 200 });
  t.equal(sent[0]?.url, 'http://deployment.test/v1/things', 'the path under the base URL verify is given');
});

t.test('security-bearer', async (t) => {
  const { answer } = await exchange('security-bearer', { status: 200 });
  t.notMatch(answer?.curl, key, 'the key never printed');
  t.match(answer?.curl, '-H "authorization: Bearer ${API_KEY}"');
});

t.test('security-scopes', async (t) => {
  const challenge = { 'www-authenticate': 'Bearer realm="api", error="insufficient_scope", scope="things:read"' };
  const refused = { code: 'insufficient_scope', message: 'no', status: 403 };
  const named = await exchange('security-scopes', { status: 403, headers: challenge, json: refused }, {}, [200]);
  t.same(named.failures, ['undeclared status']);
  t.match(named.findings.notes, [/lacks the scope things:read of example/]);
  const wrong = { 'www-authenticate': 'Bearer realm="api", error="insufficient_scope", scope="other"' };
  t.match((await exchange('security-scopes', { status: 403, headers: wrong, json: refused }, {}, [200])).failures, [
    'undeclared status',
    'scope challenge',
  ]);
});

t.test('deprecated-operation', async (t) => {
  const on = `@${Date.parse('2026-01-01T00:00:00Z') / 1000}`;
  t.same((await exchange('deprecated-operation', { status: 200, headers: { deprecation: on } })).failures, []);
  t.same((await exchange('deprecated-operation', { status: 200, headers: { deprecation: '@1' } })).failures, [
    'deprecation headers',
  ]);
});

t.test('schema-any-of', async (t) => {
  t.same((await exchange('schema-any-of', { status: 200, json: { name: 'a', status: 'sold' } })).failures, []);
  t.same((await exchange('schema-any-of', { status: 200, json: { title: 't' } })).failures, [], 'either branch');
  t.same((await exchange('schema-any-of', { status: 200, json: { other: 'x' } })).failures, [
    'body outside its schema',
  ]);
  t.same((await exchange('schema-any-of', { status: 200, json: { name: 'a', status: -1 } })).failures, [
    'body outside its schema',
  ]);
});

t.test('media-bytes', async (t) => {
  const [operation] = loadContract(constructExample('media-bytes')).operations;
  const drawn = fc.sample(validCases(operation!, { key, bodyLimit: 65536 }), { numRuns: 40, seed: 1 });
  const request = drawn.find((each) => (each.request.body as Uint8Array).includes(0xff))!.request;
  const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0x00, 0xc3]);
  const right = await exchange(
    'media-bytes',
    { status: 200, headers: { 'content-type': 'image/png' }, bytes: png },
    request,
  );
  t.equal(sent(right)['content-type'], 'image/png', 'the body sent as image/png');
  t.equal(right.sent[0]?.body, request.body, 'the drawn bytes themselves, not JSON text');
  t.match(right.answer?.curl, /--data-binary \$'[^']*\\xff/, 'the curl line carries the bytes');
  t.same(right.failures, [], 'bytes in the declared type pass');
  t.same(right.answer?.bytes, png, 'read as bytes');
  t.equal(right.answer?.json, undefined, 'never parsed');
  const json = await exchange('media-bytes', { status: 200, json: { name: 'a' } }, request);
  t.same(json.failures, ['wrong content type'], 'JSON where image/png is declared fails');
  t.match(
    json.findings.failures[0]?.message,
    'Content-Type "application/json"; openapi.yaml declares image/png for 200',
  );
  const text = await exchange(
    'media-bytes',
    { status: 200, headers: { 'content-type': 'text/plain' }, bytes: new TextEncoder().encode('hello') },
    request,
  );
  t.same(text.failures, ['wrong content type'], 'and so does text');
  t.same(
    (await exchange('media-bytes', { status: 200, headers: { 'content-type': 'image/png; x=1' } })).failures,
    [],
    'the type compared by its essence',
  );
});

t.test('media-bytes over HTTP: the bytes go and come back untouched', async (t) => {
  const service = await bytesService((received) => ({ contentType: 'image/png', body: received.body }), t);
  const body = Uint8Array.from([0xff, 0xfe, 0x00, 0x80, 0xc3]);
  const client = new PoliteClient(new Findings(), 1);
  const received = await client.send({
    method: 'PUT',
    url: `${service.origin}/v1/things`,
    headers: { 'content-type': 'image/png' },
    body,
  });
  t.equal(service.received[0]?.contentType, 'image/png');
  t.same(service.received[0]?.body, Buffer.from(body), 'sent untouched');
  t.same(received?.bytes, body, 'read back untouched');
});

/**
 * A deployment of media-bytes' example: it publishes the spec, refuses another type and too many bytes with
 * the Error object, and answers the photo it was put in `photoType`.
 */
async function photoDeployment(t: Test, photoType: string) {
  const spec = constructExample('media-bytes');
  const refuse = (status: number, code: string) => ({
    status,
    contentType: 'application/json',
    body: JSON.stringify({ code, message: code, status }),
  });
  return bytesService((received) => {
    if (received.url === '/v1/openapi.json') return { contentType: 'application/json', body: JSON.stringify(spec) };
    if (received.contentType !== 'image/png') return refuse(received.body.length === 0 ? 400 : 415, 'media');
    if (received.body.length > 1024) return refuse(413, 'too_large');
    return { contentType: photoType, body: received.body };
  }, t);
}

t.test('media-bytes, a whole run: bytes put, answered and checked', async (t) => {
  const spec = constructExample('media-bytes');
  const run = (origin: string) =>
    runVerification({ baseUrl: `${origin}/v1`, apiKey: key, readOnly: false, maxRequests: 40, seed: 7, spec });
  const keeping = await photoDeployment(t, 'image/png');
  // The example declares its 200 alone: verify rightly calls each refusal (415, 413) an undeclared status.
  const answered = (findings: Findings) => findings.failures.filter((failure) => failure.status === 200);
  const kept = await run(keeping.origin);
  t.ok(
    kept.failures.some((failure) => failure.status === 415),
    'the refusals were sent and checked',
  );
  t.same(answered(kept), [], 'a deployment that answers its photo in image/png passes');
  const puts = keeping.received.filter((each) => each.method === 'PUT' && each.contentType === 'image/png');
  t.ok(puts.length > 0, 'photos were put');
  t.ok(
    puts.some((each) => each.body.length > 1024),
    'one past the limit among them',
  );
  t.ok(
    puts.some((each) => !Buffer.from(each.body.toString('utf8')).equals(each.body)),
    'bytes that are no UTF-8 among them, sent as drawn',
  );
  const json = await run((await photoDeployment(t, 'application/json')).origin);
  t.ok(
    answered(json).length > 0 && answered(json).every((failure) => failure.check === 'wrong content type'),
    'one that answers JSON for image/png fails on its type',
  );
});

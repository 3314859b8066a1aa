import fc from 'fast-check';
import t, { type Test } from 'tap';
import { createAjv } from '../../src/http/operations/ajv.js';
import { conformanceProblems, sameBody } from '../../lib/conformance/checks.js';
import { invalidCases, validCases, type Case } from '../../lib/conformance/requests.js';
import { basePath, loadContract, type Operation } from '../../lib/conformance/spec.js';
import { bytesService } from '../helpers/bytesService.js';
import { constructExample } from '../helpers/constructExamples.js';
import { ContractClient } from '../conformance/client.js';

// The conformance model and its generators, each construct on the catalogue's example spec: what the model
// reads from it and what the generators make of it.

const context = { key: 'k'.repeat(32), bodyLimit: 65536 };
const valid = (operation: Operation): Case[] => fc.sample(validCases(operation, context), { numRuns: 60, seed: 1 });
const invalid = (operation: Operation): Case[] =>
  fc.sample(invalidCases(operation, context), { numRuns: 200, seed: 1 });
const answer = (status: number, headers: Record<string, string> = {}, json?: unknown) => ({
  status,
  headers: new Headers(headers),
  text: json === undefined ? '' : JSON.stringify(json),
  ...(json === undefined ? {} : { json }),
});

type Check = (t: Test, operation: Operation, document: ReturnType<typeof loadContract>['document']) => void;

const checks: Record<string, Check> = {
  'media-json': (t, operation) => {
    const [first] = valid(operation);
    t.match(first?.request.headers['content-type'], /^application\/json/);
    t.type(JSON.parse(String(first?.request.body)), 'object');
  },
  'media-json-suffix': (t, operation) => {
    t.equal(operation.body?.mediaType, 'application/merge-patch+json');
    const types = valid(operation).map((drawn) => drawn.request.headers['content-type']);
    t.ok(
      types.every((type) => type?.startsWith('application/merge-patch+json')),
      'sent as merge-patch+json',
    );
  },
  'param-path-simple': (t, operation) => {
    t.same(
      operation.parameters.map((parameter) => parameter.in),
      ['path'],
    );
    t.ok(valid(operation).every((drawn) => typeof drawn.request.pathParams['id'] === 'string'));
  },
  'param-query-form': (t, operation) => {
    const repeated = valid(operation).some(
      (drawn) => drawn.request.query.filter(([name]) => name === 'tag').length > 1,
    );
    t.ok(repeated, 'an array is sent as the name repeated');
  },
  'param-header-simple': (t, operation) => {
    const broken = invalid(operation).find((drawn) => drawn.request.intent === 'header X-Tag maxLength');
    t.ok(broken && broken.request.headers['x-tag']!.length > 20, 'a header longer than its maxLength is sent');
    t.ok(broken?.expect.includes(400), 'and expected to be refused');
  },
  'schema-closed-object': (t, operation) => {
    t.ok(
      invalid(operation).some((drawn) => drawn.request.intent.includes('additionalProperties')),
      'an extra property is sent',
    );
  },
  'response-created': (t, operation) => {
    t.ok(valid(operation).every((drawn) => drawn.expect.includes(201)));
    t.same(conformanceProblems(operation, answer(201, {}, { name: 'a' })), []);
  },
  'response-headers': (t, operation) => {
    t.match(conformanceProblems(operation, answer(201)), ['required header location missing']);
    t.same(conformanceProblems(operation, answer(201, { location: '/v1/things/a' })), []);
  },
  'response-links': (t, operation) => {
    t.same(operation.responses.get('200')?.links, [{ name: 'self', operationId: 'example', parameters: {} }]);
  },
  'servers-root': (t, _operation, document) => {
    t.equal(basePath(document), '/v1');
  },
  'security-bearer': (t, operation) => {
    t.ok(operation.secured);
    t.ok(valid(operation).every((drawn) => /^bearer +k{32}$/i.test(drawn.request.headers['authorization'] ?? '')));
    t.ok(
      invalid(operation).some((drawn) => drawn.expect.includes(401)),
      'a bad key is expected to be a 401',
    );
  },
  'security-scopes': (t, operation) => {
    t.same(operation.scopes, ['things:read']);
  },
  'deprecated-operation': (t, operation) => {
    t.same(operation.deprecation?.deprecatedAt, new Date('2026-01-01T00:00:00Z'));
  },
};

for (const [id, check] of Object.entries(checks))
  t.test(id, async (t) => {
    const { document, operations } = loadContract(constructExample(id));
    t.equal(operations.length, 1);
    check(t, operations[0]!, document);
  });

t.test('schema-any-of', async (t) => {
  const { operations } = loadContract(constructExample('schema-any-of'));
  const operation = operations[0]!;
  const schema = operation.body!.schema;
  const accepts = createAjv().compile(schema);
  const bodies = valid(operation).map((drawn) => JSON.parse(String(drawn.request.body)) as Record<string, unknown>);
  t.ok(
    bodies.every((body) => accepts(body)),
    'every valid body passes the anyOf',
  );
  t.ok(
    bodies.some((body) => 'name' in body) && bodies.some((body) => 'title' in body && !('name' in body)),
    'drawn from each branch',
  );
  t.ok(
    bodies.some((body) => typeof body['status'] === 'string') &&
      bodies.some((body) => typeof body['status'] === 'number'),
    'a property typed by anyOf drawn from each of its branches',
  );
  const broken = invalid(operation).filter((drawn) => drawn.request.intent.startsWith('body anyOf'));
  t.ok(broken.length > 0, 'bodies that match no branch are sent');
  t.ok(
    broken.every((drawn) => !accepts(JSON.parse(String(drawn.request.body)))),
    'each matches no branch',
  );
  t.ok(
    broken.every((drawn) => drawn.expect.includes(400)),
    'and is expected to be refused',
  );
  t.same(conformanceProblems(operation, answer(200, { 'content-type': 'application/json' }, { title: 't' })), []);
});

t.test('media-bytes', async (t) => {
  const { operations } = loadContract(constructExample('media-bytes'));
  const operation = operations[0]!;
  t.match(operation.body, { mediaType: 'image/png', kind: 'bytes', limitBytes: 1024 });
  t.match(operation.responses.get('200'), { mediaType: 'image/png', kind: 'bytes' });
  const drawn = valid(operation);
  const bodies = drawn.map((each) => each.request.body);
  t.ok(
    bodies.every((body) => body instanceof Uint8Array && body.length <= 1024),
    'bodies are bytes within the x-body-limit-bytes',
  );
  const sizes = bodies.map((body) => (body as Uint8Array).length);
  t.ok(sizes.filter((size) => size < 64).length > sizes.length / 2, 'mostly small');
  t.ok(sizes.includes(1024), 'and the limit itself');
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const isUtf8 = (body: Uint8Array) => {
    try {
      utf8.decode(body);
      return true;
    } catch {
      return false;
    }
  };
  t.ok(
    bodies.some((body) => !isUtf8(body as Uint8Array)),
    'some of them no UTF-8',
  );
  t.ok(
    drawn.every((each) => each.request.headers['content-type'] === 'image/png'),
    'sent as image/png',
  );
  const broken = invalid(operation);
  t.notOk(
    broken.some((each) => /^(body |malformed JSON|empty body)/.test(each.request.intent)),
    'no JSON to break',
  );
  const oversize = broken.filter((each) => each.request.intent === 'oversize body');
  t.ok(
    oversize.length > 0 &&
      oversize.every(
        (each) => each.request.body instanceof Uint8Array && each.request.body.length > 1024 && each.expect[0] === 413,
      ),
    'bytes past the operation limit expected to be a 413',
  );

  // Over HTTP: the bytes arrive as drawn, and an answer is read as bytes in its declared type only.
  let answerType = 'image/png';
  const service = await bytesService((received) => ({ contentType: answerType, body: received.body }), t);
  const client = new ContractClient(service.origin, '/v1', operations);
  t.teardown(() => {
    client.close();
  });
  const request = drawn.find((each) => !isUtf8(each.request.body as Uint8Array))!.request;
  const echoed = await client.send(request);
  t.equal(service.received[0]?.contentType, 'image/png', 'sent as image/png');
  t.same(service.received[0]?.body, Buffer.from(request.body as Uint8Array), 'sent raw');
  t.same(echoed.problems, [], 'the right bytes in image/png pass');
  t.same(echoed.bytes, request.body, 'read back byte for byte');
  for (const wrong of ['application/json', 'text/plain; charset=utf-8']) {
    answerType = wrong;
    const { problems } = await client.send({ ...request, body: new TextEncoder().encode('{"a":1}') });
    t.match(problems, [`Content-Type "${wrong}": status 200 declares image/png bytes (got 7 bytes)`], wrong);
  }
  // Two answers compared (an ETag revalidation, an idempotent replay) by their bytes: 0xff and 0xfe both decode
  // to U+FFFD.
  answerType = 'image/png';
  const [ff, fe] = await Promise.all(
    [0xff, 0xfe].map((byte) => client.send({ ...request, body: Uint8Array.from([0x89, byte]) })),
  );
  t.equal(ff!.text, fe!.text, 'the same text');
  t.notOk(sameBody(ff!, fe!), 'not the same body');
  t.ok(sameBody(ff!, { ...ff!, bytes: Uint8Array.from([0x89, 0xff]) }), 'the same bytes are');
});

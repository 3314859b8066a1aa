import t from 'tap';
import { changelog } from '../../scripts/contract/changelog.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';

const error = { type: 'object', properties: { code: { type: 'string', enum: ['a'] } } };

function spec(version: string, extra: { get?: JsonObject; post?: JsonObject; schemas?: JsonObject }): JsonObject {
  return {
    openapi: '3.1.0',
    info: { title: 't', version },
    paths: {
      '/pets': {
        get: { operationId: 'listPets', responses: { '200': { description: 'ok' } }, ...extra.get },
        ...(extra.post ? { post: extra.post } : {}),
      },
    },
    components: { schemas: { Error: error, ...extra.schemas } },
  };
}

t.test('names every kind of change between two contracts', async (t) => {
  const before = spec('1.0.0', {
    get: { parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', maximum: 100 } }] },
  });
  const after = spec('1.1.0', {
    get: {
      deprecated: true,
      'x-sunset': '2030-12-05T00:00:00Z',
      parameters: [
        { name: 'limit', in: 'query', schema: { type: 'integer', maximum: 200 } },
        { name: 'If-None-Match', in: 'header', schema: { type: 'string' } },
      ],
      responses: {
        '200': { description: 'ok', headers: { ETag: { schema: { type: 'string' } } } },
        '304': { description: 'not modified' },
      },
    },
    post: { operationId: 'createPet', responses: { '201': { description: 'created' } } },
    schemas: {
      Error: { ...error, properties: { code: { type: 'string', enum: ['a', 'b'] } } },
      IdempotencyError: { description: 'Another error. More text.' },
    },
  });
  (after['paths'] as { '/pets': { get: JsonObject } })['/pets'].get['x-slo'] = { availability: 99.9 };
  const text = changelog(before, after);
  t.match(text, /- `x-slo`: `null` → `\{"availability":99\.9\}`/);
  t.match(text, /^## 1\.1\.0\n/);
  t.match(text, /Changes to the contract since 1\.0\.0/);
  t.match(text, /- Added `POST \/pets` \(createPet\)\./);
  t.match(text, /- Deprecated `GET \/pets` \(listPets\), sunset 2030-12-05T00:00:00Z\./);
  t.match(text, /- `deprecated`: null → true/);
  t.match(text, /- header parameter `If-None-Match` added \(optional; type `"string"`\)/);
  t.match(text, /- query parameter `limit`: schema type `"integer"`, maximum `100` → type `"integer"`, maximum `200`/);
  t.match(text, /- response `304` added \(no body; headers: none\)/);
  t.match(text, /- response header `ETag` added to `200`/);
  t.match(text, /- Error\.code: enum values added \["b"\]/);
  t.match(text, /- `IdempotencyError` added: Another error\./);

  const removed = changelog(after, before);
  t.match(removed, /- Removed `POST \/pets` \(createPet\)\./);
  t.match(removed, /- header parameter `If-None-Match` removed/);
  t.match(removed, /- response `304` removed/);
  t.match(removed, /- `IdempotencyError` removed/);
});

t.test('says so when nothing changed', async (t) => {
  const same = spec('1.0.0', {});
  const text = changelog(same, same);
  t.match(text, /No operation added, removed or deprecated\./);
  t.match(text, /No schema changed\./);
});

t.test('schema values are inline code, so a pattern never reads as a Markdown link', async (t) => {
  const cursor = (pattern: string) => ({
    get: { parameters: [{ name: 'cursor', in: 'query', schema: { type: 'string', pattern } }] },
  });
  const text = changelog(spec('1.0.0', cursor('^[a-z]+$')), spec('1.1.0', cursor('^[ab](?:c|d)`$')));
  t.match(text, 'pattern `"^[a-z]+$"` → type `"string"`, pattern ``"^[ab](?:c|d)`$"``');
});

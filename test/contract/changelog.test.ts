import t from 'tap';
import { changelog } from '../../lib/contract/changelog.js';
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

// The entries are the changelog's view of lib/contract/diff.ts: each line carries the rule id and level the gate
// judged by (the Error.code enum, shared by no operation here, is no longer listed on its own).
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
  t.match(text, /- `x-slo`: `none` → `\{"availability":99\.9\}` \(none: `api-objectives-changed`\)/);
  t.match(text, /^## 1\.1\.0\n/);
  t.match(text, /Changes to the contract since 1\.0\.0/);
  t.match(text, /- Added `POST \/pets` \(createPet\)\. \(additive: `endpoint-added`\)/);
  t.match(
    text,
    /- Deprecated `GET \/pets` \(listPets\), sunset `"2030-12-05T00:00:00Z"`\. \(warning: `endpoint-deprecated`\)/,
  );
  t.match(text, /- header parameter `If-None-Match`: added, optional \(additive: `new-optional-request-parameter`\)/);
  t.match(text, /- query parameter `limit`: maximum `100` → `200` \(additive: `request-parameter-max-increased`\)/);
  t.match(text, /- response `304` added \(additive: `response-success-status-added`\)/);
  t.match(text, /- response `200` header `ETag`: added \(additive: `response-header-added`\)/);
  t.match(text, /- `IdempotencyError` added: Another error\. \(none: `component-schema-added`\)/);

  const removed = changelog(after, before);
  t.match(removed, /- Removed `POST \/pets` \(createPet\)\. \(breaking: `api-removed-without-deprecation`\)/);
  t.match(removed, /- header parameter `If-None-Match`: removed \(warning: `request-parameter-removed`\)/);
  t.match(removed, /- response `304` removed \(breaking: `response-success-status-removed`\)/);
  t.match(removed, /- `IdempotencyError` removed \(none: `component-schema-removed`\)/);
});

t.test('says so when nothing changed', async (t) => {
  const same = spec('1.0.0', {});
  const text = changelog(same, same);
  t.match(text, /No operation added, removed or deprecated\./);
  t.match(text, /### Servers and components\n\nNo server or component changed\./);
});

t.test(
  'a server moved is listed under servers and components, not under a heading that leaves servers out',
  async (t) => {
    const at = (url: string) => ({ ...spec('1.0.0', {}), servers: [{ url }] });
    const text = changelog(at('https://api.example.com/v1'), at('https://api.example.com/v2'));
    t.match(
      text,
      /### Servers and components\n\n- server `https:\/\/api\.example\.com\/v1`: base path `"\/v1"` → `"\/v2"` \(breaking: `api-server-base-path-changed`\)/,
    );
  },
);

t.test('schema values are inline code, so a pattern never reads as a Markdown link', async (t) => {
  const cursor = (pattern: string) => ({
    get: { parameters: [{ name: 'cursor', in: 'query', schema: { type: 'string', pattern } }] },
  });
  const text = changelog(spec('1.0.0', cursor('^[a-z]+$')), spec('1.1.0', cursor('^[ab](?:c|d)`$')));
  t.match(text, 'pattern `"^[a-z]+$"` → ``"^[ab](?:c|d)`$"``');
});

t.test('the changelog and the gate read one diff: an entry says the level the gate judged', async (t) => {
  const before = spec('1.0.0', {
    get: { parameters: [{ name: 'cursor', in: 'query', schema: { type: 'string' } }] },
  });
  const after = spec('1.1.0', {});
  t.match(changelog(before, after), /- query parameter `cursor`: removed \(breaking: `request-parameter-removed`\)/);
});

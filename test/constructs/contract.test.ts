import t from 'tap';
import { catalogue } from '../../lib/constructs/catalogue.js';
import { diff } from '../../lib/contract/diff.js';
import { dereference, isObject, type Json, type JsonObject } from '../../lib/openapi/dereference.js';
import { constructExample } from '../helpers/constructExamples.js';

// The contract gate and its review, each construct on the catalogue's example spec: taking the construct out
// where its detector finds it is a change the gate names with its rule and level, and the review tells the
// consumer in a sentence.

/** The example with the node at `pointer` taken out. */
function without(document: JsonObject, pointer: string): JsonObject {
  const copy = structuredClone(document);
  const keys = pointer
    .slice(1)
    .split('/')
    .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'));
  const parent = keys
    .slice(0, -1)
    .reduce<Json | undefined>(
      (node, key) => (Array.isArray(node) ? node[Number(key)] : isObject(node) ? node[key] : undefined),
      copy,
    );
  const last = keys.at(-1)!;
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else if (isObject(parent)) delete parent[last];
  return copy;
}

const removal: Record<string, string> = {
  'media-json': 'request-body-media-type-removed:breaking',
  'media-json-suffix': 'request-body-media-type-removed:breaking',
  'media-bytes': 'request-body-media-type-removed:breaking',
  'param-path-simple': 'request-parameter-removed:breaking',
  'param-query-form': 'request-parameter-removed:breaking',
  'param-header-simple': 'request-parameter-removed:breaking',
  'schema-closed-object': 'request-body-additional-properties-allowed:additive',
  'response-created': 'response-success-status-removed:breaking',
  'response-headers': 'response-header-removed:breaking',
  'response-links': 'response-link-removed:breaking',
  'servers-root': 'api-server-removed:breaking',
  'security-bearer': 'api-security-component-removed:warning',
  'security-scopes': 'api-security-removed:warning',
  'deprecated-operation': 'endpoint-reactivated:none',
};

for (const [id, expected] of Object.entries(removal))
  t.test(id, async (t) => {
    const base = constructExample(id);
    const [pointer] = catalogue
      .find((construct) => construct.id === id)!
      .detect({ raw: base, document: dereference(base) });
    const changes = diff(base, without(base, pointer!));
    t.ok(changes.length > 0, `taking out #${pointer} is a change`);
    t.ok(
      changes.some((change) => `${change.rule}:${change.level}` === expected),
      `${expected} among ${changes.map((change) => `${change.rule}:${change.level}`).join(', ')}`,
    );
    t.ok(
      changes.every((change) => change.consumer.length > 0),
      'each told to the consumer',
    );
  });

t.test('response-links: a link that leads elsewhere is breaking, a new one additive', async (t) => {
  const base = constructExample('response-links');
  const moved = structuredClone(base);
  const links = (document: JsonObject) =>
    (((document['paths'] as JsonObject)['/things'] as JsonObject)['get'] as JsonObject)['responses'] as JsonObject;
  const link = (document: JsonObject) => (links(document)['200'] as JsonObject)['links'] as JsonObject;
  link(moved)['self'] = { operationId: 'example', parameters: { id: '$response.body#/id' } };
  t.match(diff(base, moved), [{ rule: 'response-link-changed', level: 'breaking' }]);
  const added = structuredClone(base);
  link(added)['again'] = { operationId: 'example' };
  t.match(diff(base, added), [{ rule: 'response-link-added', level: 'additive' }]);
});

t.test(
  'media-json-suffix: a +json body is compared like application/json; another media type is a change',
  async (t) => {
    const base = constructExample('media-json-suffix');
    const patch = (document: JsonObject) =>
      (((document['paths'] as JsonObject)['/things'] as JsonObject)['patch'] as JsonObject)[
        'requestBody'
      ] as JsonObject;
    const rules = (changes: ReturnType<typeof diff>) => changes.map((change) => `${change.rule}:${change.level}`);
    const narrowed = { type: 'object', properties: { name: { type: 'string', maxLength: 10 } } };

    const tighter = structuredClone(base);
    patch(tighter)['content'] = { 'application/merge-patch+json': { schema: narrowed } };
    const [narrowing] = diff(base, tighter);
    t.equal(`${narrowing?.rule}:${narrowing?.level}`, 'request-property-max-length-decreased:breaking');
    t.match(narrowing?.message, 'request body `application/merge-patch+json`.name');
    t.match(narrowing?.consumer, /as in `\{"name":"[^"]{11}"\}`\), accepted before, are now refused with 400/);

    const rewritten = structuredClone(base);
    patch(rewritten)['content'] = { 'Application/Merge-Patch+JSON; charset=utf-8': { schema: narrowed } };
    t.same(
      rules(diff(base, rewritten)),
      ['request-property-max-length-decreased:breaking'],
      'the same media type written otherwise: its schemas compared, no media type added or removed',
    );

    const plain = structuredClone(base);
    patch(plain)['content'] = {
      'application/json': (patch(base)['content'] as JsonObject)['application/merge-patch+json']!,
    };
    const changed = diff(base, plain);
    t.same(rules(changed).sort(), [
      'request-body-media-type-added:additive',
      'request-body-media-type-removed:breaking',
    ]);
    t.match(
      changed.find((change) => change.rule === 'request-body-media-type-removed')?.consumer,
      'with `application/merge-patch+json` bodies are now refused with 415',
    );
  },
);

t.test('media-bytes: bytes bodies are compared by media type and size, never by JSON values', async (t) => {
  const base = constructExample('media-bytes');
  const put = (document: JsonObject) =>
    ((document['paths'] as JsonObject)['/things'] as JsonObject)['put'] as JsonObject;
  const requestBody = (document: JsonObject) => put(document)['requestBody'] as JsonObject;
  const answer = (document: JsonObject) =>
    ((put(document)['responses'] as JsonObject)['200'] as JsonObject)['content'] as JsonObject;
  const bytesOf = (mediaType: string): JsonObject => ({ schema: { type: 'string', contentMediaType: mediaType } });
  const rules = (changes: ReturnType<typeof diff>) => changes.map((change) => `${change.rule}:${change.level}`).sort();
  const edited = (edit: (document: JsonObject) => void) => {
    const copy = structuredClone(base);
    edit(copy);
    return diff(base, copy);
  };

  t.test('a bytes media type added beside the old one is additive', async (t) => {
    const changes = edited((head) => {
      (requestBody(head)['content'] as JsonObject)['image/jpeg'] = bytesOf('image/jpeg');
    });
    t.same(rules(changes), ['request-body-media-type-added:additive']);
    t.equal(changes[0]?.consumer, 'Requests to PUT /things may now send `image/jpeg` bodies.');
  });

  t.test('a bytes media type replaced in a request is breaking: old clients meet 415', async (t) => {
    const changes = edited((head) => {
      requestBody(head)['content'] = { 'image/jpeg': bytesOf('image/jpeg') };
    });
    t.same(rules(changes), ['request-body-media-type-added:additive', 'request-body-media-type-removed:breaking']);
    t.equal(
      changes.find((change) => change.level === 'breaking')?.consumer,
      'Requests to PUT /things with `image/png` bodies are now refused with 415.',
    );
  });

  t.test('a bytes media type replaced in an answer is breaking: clients expect png', async (t) => {
    const changes = edited((head) => {
      ((put(head)['responses'] as JsonObject)['200'] as JsonObject)['content'] = {
        'image/jpeg': bytesOf('image/jpeg'),
      };
    });
    t.same(rules(changes), ['response-media-type-added:breaking', 'response-media-type-removed:breaking']);
    t.equal(
      changes.find((change) => change.rule === 'response-media-type-removed')?.consumer,
      'Clients of PUT /things that read `image/png` answers no longer get them.',
    );
  });

  t.test('x-body-limit-bytes lowered is breaking (413, with the smallest body refused), raised additive', async (t) => {
    const [lowered, ...others] = edited((head) => {
      requestBody(head)['x-body-limit-bytes'] = 512;
    });
    t.same(others, []);
    t.match(lowered, {
      rule: 'request-body-limit-decreased',
      level: 'breaking',
      before: 1024,
      after: 512,
      pointer: '/paths/~1things/put/requestBody/x-body-limit-bytes',
    });
    t.match(lowered?.message, 'a body of 513 bytes: accepted by the base, refused by the head');
    t.equal(
      lowered?.consumer,
      'Requests to PUT /things with bodies of 513 to 1,024 bytes, accepted before, are now refused with 413.',
    );
    const raised = edited((head) => {
      requestBody(head)['x-body-limit-bytes'] = 4096;
    });
    t.same(rules(raised), ['request-body-limit-increased:additive']);
    t.equal(
      raised[0]?.consumer,
      'Requests to PUT /things may now send bodies of up to 4,096 bytes; every body accepted before still is.',
    );
    // Absent, the limit is the server's (src/http/limits.ts): 64 KiB, more than 1,024.
    const dropped = edited((head) => {
      delete requestBody(head)['x-body-limit-bytes'];
    });
    t.match(dropped, [{ rule: 'request-body-limit-increased', level: 'additive', after: 65536 }]);
    const serverLimit = structuredClone(base);
    requestBody(serverLimit)['x-body-limit-bytes'] = 65536;
    t.same(
      diff(serverLimit, without(serverLimit, '/paths/~1things/put/requestBody/x-body-limit-bytes')),
      [],
      "the server's limit written out is no change",
    );
  });

  t.test('a bytes schema with or without contentMediaType is no change, and no schema draws JSON', async (t) => {
    const plain = edited((head) => {
      (requestBody(head)['content'] as JsonObject)['image/png'] = { schema: { type: 'string' } };
      answer(head)['image/png'] = { schema: { type: 'string', contentMediaType: 'image/jpeg' } };
    });
    t.same(plain, [], 'contentMediaType added, removed or renamed says nothing the bytes obey');
    const rewritten = edited((head) => {
      (requestBody(head)['content'] as JsonObject)['image/png'] = { schema: { type: 'string', maxLength: 10 } };
      answer(head)['image/png'] = { schema: {} };
    });
    t.same(rules(rewritten), ['request-body-bytes-schema-changed:none', 'response-body-bytes-schema-changed:none']);
    t.notOk(
      rewritten.some((change) => change.counterExample !== undefined || /as in|like [`{]/.test(change.consumer)),
      'no JSON counter-example for raw bytes',
    );
    t.same(
      rewritten.map((change) => change.consumer),
      [
        'Nothing changes for clients: the request body is bytes, sent as they are; no schema checks them.',
        'Nothing changes for clients: the `200` response is bytes, answered as they are; no schema checks them.',
      ],
    );
  });
});

// A branch added to a request anyOf widens it, one removed narrows it; for an answer the reverse.
t.test('schema-any-of', async (t) => {
  const base = constructExample('schema-any-of');
  const operation = (document: JsonObject) =>
    ((document['paths'] as JsonObject)['/things'] as JsonObject)['post'] as JsonObject;
  const branches = (document: JsonObject, where: 'request' | 'response') => {
    const holder =
      where === 'request'
        ? operation(document)['requestBody']
        : (operation(document)['responses'] as JsonObject)['200'];
    return (((holder as JsonObject)['content'] as JsonObject)['application/json'] as JsonObject)[
      'schema'
    ] as JsonObject;
  };
  const levels = (changes: ReturnType<typeof diff>) => changes.map((change) => `${change.rule}:${change.level}`);
  const counted: JsonObject = { type: 'object', required: ['count'], properties: { count: { type: 'integer' } } };

  const wider = structuredClone(base);
  (branches(wider, 'request')['anyOf'] as Json[]).push(counted);
  t.notOk(
    diff(base, wider).some((change) => change.level === 'breaking'),
    `a branch added to a request is not breaking: ${levels(diff(base, wider)).join(', ')}`,
  );

  const narrower = structuredClone(base);
  (branches(narrower, 'request')['anyOf'] as Json[]).splice(1, 1);
  const narrowed = diff(base, narrower).filter((change) => change.level === 'breaking');
  t.ok(narrowed.length > 0, `a branch removed from a request is breaking: ${levels(diff(base, narrower)).join(', ')}`);
  t.match(narrowed[0]?.consumer, /title/, 'with a counter-example of the removed branch');

  const answeredWider = structuredClone(base);
  (branches(answeredWider, 'response')['anyOf'] as Json[]).push(counted);
  const surprised = diff(base, answeredWider).filter((change) => change.level === 'breaking');
  t.ok(
    surprised.length > 0,
    `a branch added to an answer is breaking: ${levels(diff(base, answeredWider)).join(', ')}`,
  );
  t.match(surprised[0]?.consumer, /count/, 'with an answer of the new branch');

  const answeredNarrower = structuredClone(base);
  (branches(answeredNarrower, 'response')['anyOf'] as Json[]).splice(1, 1);
  t.notOk(
    diff(base, answeredNarrower).some((change) => change.level === 'breaking'),
    `a branch removed from an answer is not breaking: ${levels(diff(base, answeredNarrower)).join(', ')}`,
  );
});

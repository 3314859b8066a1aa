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

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

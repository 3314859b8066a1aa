// A property an anyOf, oneOf or allOf branch declares is still read (lib/contract/objectShape.ts): each sentence about a
// property leaving is checked against a value that shows it, and a property one branch keeps gets no such sentence.
import { Ajv2020 } from 'ajv/dist/2020.js';
import t, { type Test } from 'tap';
import { diff, type Change } from '../../lib/contract/diff.js';
import { objectShape } from '../../lib/contract/objectShape.js';
import type { Json, JsonObject } from '../../lib/openapi/dereference.js';

const text = { type: 'string', maxLength: 20 };
const size = { type: 'integer', minimum: 0, maximum: 10 };
/** An object of the named properties, each required, closed unless said otherwise. */
const shape = (names: string[], { open = false, optional = [] as string[] } = {}): JsonObject => ({
  type: 'object',
  ...(open ? {} : { additionalProperties: false }),
  required: names.filter((name) => !optional.includes(name)),
  properties: Object.fromEntries(names.map((name) => [name, name === 'size' ? size : text])),
});
const thing = shape(['name', 'size']);

/** A spec whose one operation takes `request` and answers `response`. */
const spec = (request: Json, response: Json): JsonObject => ({
  openapi: '3.1.0',
  info: { title: 'Things', version: '1.0.0' },
  paths: {
    '/things': {
      post: {
        operationId: 'createThing',
        requestBody: { required: true, content: { 'application/json': { schema: request } } },
        responses: { '201': { description: 'Created', content: { 'application/json': { schema: response } } } },
      },
    },
  },
});
const changesOf = (before: [Json, Json], after: [Json, Json]) =>
  diff(spec(...before), spec(...after), { today: '2026-12-02' });
const about = (changes: Change[], name: string) =>
  changes.filter((change) => change.message.includes(`.${name}:`) || change.message.includes(`.${name} `));

const ajv = new Ajv2020({ strict: false, allErrors: true });
const accepts = (schema: Json, value: Json) => ajv.validate(schema as JsonObject, value);

/** The changes about `name` of a request body that went from `thing` to `head`, the response kept. */
const requestChanges = (head: JsonObject) => about(changesOf([thing, thing], [head, thing]), 'name');

t.test('a request body renamed by an anyOf of whole objects still reads `name` in one branch', async (t) => {
  const head = { anyOf: [shape(['name', 'size']), shape(['label', 'size'])] };
  const changes = requestChanges(head);
  t.notOk(
    changes.some((change) => /no longer reads|refused/.test(change.consumer)),
    'no sentence says `name` is no longer read or refused',
    { changes },
  );
  t.notOk(
    changes.some((change) => change.level === 'breaking' || change.level === 'warning'),
    'nothing about `name` a client must look at',
  );
  // The other direction: no body the base accepted with `name` that the head refuses or reads without it.
  t.ok(objectShape(head).properties.has('name'), 'a branch declares `name`, so a body that sends it has it read');
  t.ok(accepts(head, { name: 'Rex', size: 1 }), 'the body the base took is still taken');
});

t.test('`name` gone from every closed branch: refused, with a body that shows it', async (t) => {
  const head = { anyOf: [shape(['label', 'size']), shape(['title', 'size'])] };
  const removed = requestChanges(head).find((change) => change.rule === 'request-property-removed');
  t.match(removed, { level: 'breaking', counterExample: { acceptedBy: 'base', refusedBy: 'head' } }, 'breaking', {
    removed,
  });
  const value = removed?.counterExample?.value as JsonObject;
  t.ok(value && 'name' in value, 'the counter-example sends `name`', { value });
  t.ok(accepts(thing, value), 'the base accepted it');
  t.notOk(accepts(head, value), 'the head refuses it');
  t.match(removed?.consumer, /`name`.*accepted before, are now refused with 400/);
});

t.test('`name` gone from every open branch: no longer read, and a body shows it is ignored', async (t) => {
  const head = {
    anyOf: [shape(['label', 'size'], { open: true, optional: ['label'] }), shape(['title', 'size'], { open: true })],
  };
  const removed = requestChanges(head).find((change) => change.rule === 'request-property-removed');
  t.match(removed, { level: 'warning' });
  t.match(removed?.consumer, /The service no longer reads `name` in the request body/);
  // The warning's own example, as the breaking one has its counter-example: a body sending `name` that both
  // accept, and no branch of the head reads `name`.
  t.match(removed?.ignoredExample, { ignoredBy: 'head' }, 'the change carries its example', { removed });
  t.notOk(removed?.counterExample, 'nothing is refused');
  const value = removed?.ignoredExample?.value as JsonObject;
  t.ok(value && 'name' in value, 'the example sends `name`', { value });
  t.ok(accepts(thing, value) && accepts(head, value), 'both accept a body that sends `name`');
  t.notOk(objectShape(head).properties.has('name'), 'no branch of the head reads it');
});

t.test(
  'a request body that may now leave out `name`: additive, with a body the head accepts and the base refused',
  async (t) => {
    const head = shape(['name', 'size'], { optional: ['name'] });
    const changes = requestChanges(head);
    const optional = changes.find((change) => change.rule === 'request-property-became-optional');
    t.match(optional, { level: 'additive', counterExample: { acceptedBy: 'head', refusedBy: 'base' } }, '', {
      changes,
    });
    const value = optional?.counterExample?.value as JsonObject;
    t.notOk('name' in value, 'the example leaves out `name`', { value });
    t.ok(accepts(head, value), 'the head accepts it');
    t.notOk(accepts(thing, value), 'the base refused it');
  },
);

/** The changes about `name` of a response that went from `thing` to `head`, the request kept. */
const responseChanges = (head: JsonObject) => about(changesOf([thing, thing], [thing, head]), 'name');

t.test('a response anyOf where one branch lacks `name`: it may now lack it, as its example shows', async (t) => {
  const head = { anyOf: [shape(['name', 'size']), shape(['label', 'size'])] };
  const lacking = responseChanges(head).find((change) => change.level === 'breaking');
  t.match(lacking, { rule: 'response-property-became-optional', counterExample: { acceptedBy: 'head' } }, '', {
    changes: responseChanges(head),
  });
  t.match(lacking?.consumer, /^Responses may now lack `name`/);
  const value = lacking?.counterExample?.value as JsonObject;
  t.notOk('name' in value, 'the example lacks `name`', { value });
  t.ok(accepts(head, value), 'the head may send it');
  t.notOk(accepts(thing, value), 'the base could not');
});

t.test(
  'a response anyOf whose every branch carries `name`: nothing about `name`, and `label` may be carried',
  async (t) => {
    const head = { anyOf: [shape(['name', 'size']), shape(['name', 'size', 'label'])] };
    const changes = changesOf([thing, thing], [thing, head]);
    t.notOk(
      about(changes, 'name').some((change) => change.level !== 'none'),
      'no sentence says `name` left or may be missing',
      { changes },
    );
    const carried = about(changes, 'label').find((change) => change.rule === 'response-optional-property-added');
    t.match(carried?.consumer, /^Responses may now carry `label`/, '', { changes });
    t.ok(accepts(head, { name: 'Rex', size: 1, label: 'dog' }), 'a response the head may send carries `label`');
  },
);

t.test('the shape of a schema reads through allOf, anyOf and oneOf', async (t: Test) => {
  const { properties, required, closed } = objectShape({
    allOf: [shape(['size'])],
    oneOf: [shape(['name', 'label']), shape(['name'], { open: true })],
  });
  t.same([...properties.keys()].sort(), ['label', 'name', 'size']);
  t.same(properties.get('label')?.steps, '/oneOf/0/properties/label', 'where the first branch declares it');
  t.same([...required].sort(), ['name', 'size'], 'required by an allOf member or by every branch');
  t.ok(closed, 'a closed allOf member refuses what it does not declare');
  t.notOk(objectShape({ anyOf: [shape(['name']), shape(['label'], { open: true })] }).closed, 'one open branch');
});

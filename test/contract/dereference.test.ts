// Keywords beside a $ref, as every machine that reads a schema sees them (lib/openapi/dereference.ts): the
// dereferenced schema must admit exactly what ajv admits for the schema as written (JSON Schema 2020-12, where the
// target and the keywords beside it both apply).
import { Ajv2020 } from 'ajv/dist/2020.js';
import t from 'tap';
import { validatorOf } from '../../lib/contract/admitted.js';
import { dereference, type Json, type JsonObject } from '../../lib/openapi/dereference.js';

const components = {
  Name: { type: 'string', minLength: 1, maxLength: 10, pattern: '^[a-z]+$' },
  Count: { type: 'integer', minimum: 1, maximum: 100 },
  Color: { type: 'string', enum: ['red', 'green', 'blue'] },
  Box: {
    type: 'object',
    additionalProperties: false,
    required: ['size'],
    properties: { size: { type: 'integer' } },
  },
};

/** Schemas as a contract may write them beside a $ref, with values that tell a wrong reading apart. */
const cases: { written: JsonObject; values: Json[] }[] = [
  { written: { $ref: '#/components/schemas/Name', maxLength: 20 }, values: ['abc', 'a'.repeat(15), ''] },
  { written: { $ref: '#/components/schemas/Name', maxLength: 5 }, values: ['abc', 'abcdefg'] },
  { written: { $ref: '#/components/schemas/Name', pattern: '^[a-c]+$' }, values: ['abc', 'xyz', 'ABC'] },
  { written: { $ref: '#/components/schemas/Count', minimum: 0, type: 'number' }, values: [0, 1, 1.5, 100, 101] },
  { written: { $ref: '#/components/schemas/Count', maximum: 50, exclusiveMinimum: 2 }, values: [2, 3, 50, 51] },
  { written: { $ref: '#/components/schemas/Color', enum: ['red', 'black'] }, values: ['red', 'black', 'green'] },
  {
    written: { $ref: '#/components/schemas/Box', properties: { color: { type: 'string' } } },
    values: [{ size: 1 }, { size: 1, color: 'red' }, {}],
  },
  {
    written: { $ref: '#/components/schemas/Box', required: ['color'] },
    values: [{ size: 1 }, { size: 1, color: 'x' }],
  },
];

// ajv on its own: the gate's validatorOf drops a $ref, which after dereferencing only closes a cycle.
const ajv = new Ajv2020();

t.test('a schema beside a $ref admits what ajv admits for it as written', async (t) => {
  for (const { written, values } of cases) {
    const document = { components: { schemas: components }, schema: written } as unknown as JsonObject;
    const merged = dereference(document)['schema']!;
    const asWritten = ajv.compile({ $defs: components, ...rewrite(written) });
    const asRead = validatorOf(merged, 'test');
    for (const value of values)
      t.equal(asRead(value), asWritten(value), `${JSON.stringify(written)} on ${JSON.stringify(value)}`, { merged });
  }
});

t.test('beside a reference to a parameter, only summary and description replace the target', async (t) => {
  const document = {
    components: { parameters: { Limit: { name: 'limit', in: 'query', description: 'How many.' } } },
    used: { $ref: '#/components/parameters/Limit', description: 'At most this many.', name: 'ignored' },
  } as unknown as JsonObject;
  t.same(dereference(document)['used'], { name: 'limit', in: 'query', description: 'At most this many.' });
});

/** The written schema for ajv on its own: its $ref pointed at the $defs beside it. */
function rewrite(schema: JsonObject): JsonObject {
  return { ...schema, $ref: String(schema['$ref']).replace('#/components/schemas/', '#/$defs/') };
}

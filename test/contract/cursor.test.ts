import fc from 'fast-check';
import t from 'tap';
import { loadContract } from '../../lib/conformance/spec.js';
import { decodeCursor, encodeCursor } from '../../src/handlers/cursor.js';

/**
 * The cursor's schema and the service agree both ways: every text the
 * schema admits is one the service serves, and every cursor the service
 * issues is one the schema admits (issue 37). The conformance suite checks
 * the same over HTTP; this holds the two definitions together in one place.
 */
const cursorSchema = () => {
  const listPets = loadContract().operations.find((operation) => operation.operationId === 'listPets');
  const schema = listPets?.parameters.find((parameter) => parameter.name === 'cursor')?.schema;
  if (!schema || typeof schema['pattern'] !== 'string') throw new Error('listPets has no cursor pattern');
  return {
    pattern: new RegExp(schema['pattern'], 'u'),
    minLength: Number(schema['minLength']),
    maxLength: Number(schema['maxLength']),
  };
};

t.test('every schema-valid cursor decodes to a position', async (t) => {
  const { pattern, minLength, maxLength } = cursorSchema();
  fc.assert(
    fc.property(fc.stringMatching(pattern), (cursor) => {
      const afterId = decodeCursor(cursor);
      return (
        cursor.length >= minLength &&
        cursor.length <= maxLength &&
        afterId !== undefined &&
        afterId >= 1 &&
        afterId <= Number.MAX_SAFE_INTEGER
      );
    }),
    { numRuns: 5000 },
  );
  t.pass('5000 schema-valid cursors decoded');
});

t.test('every issued cursor is schema-valid and reads back as its id', async (t) => {
  const { pattern, minLength, maxLength } = cursorSchema();
  fc.assert(
    fc.property(
      fc.oneof(
        fc.integer({ min: 1, max: 999 }),
        fc.maxSafeNat().filter((id) => id > 0),
      ),
      (id) => {
        const cursor = encodeCursor(id);
        return (
          pattern.test(cursor) &&
          cursor.length >= minLength &&
          cursor.length <= maxLength &&
          decodeCursor(cursor) === id
        );
      },
    ),
    { numRuns: 5000 },
  );
  t.ok(pattern.test(encodeCursor(Number.MAX_SAFE_INTEGER)), 'the largest id');
});

t.test('a position past the largest id reads as the end of the list', async (t) => {
  const { pattern } = cursorSchema();
  const past = Buffer.from('v1:9999999999999999').toString('base64url');
  t.ok(pattern.test(past), 'schema-valid');
  t.equal(decodeCursor(past), Number.MAX_SAFE_INTEGER);
});

t.test('text the schema refuses is refused by the service too', async (t) => {
  const { pattern } = cursorSchema();
  for (const text of ['0', 'v1:0', 'v1:01', 'v1:12345678901234567', 'v2:1', 'v1:-1', 'v1:1 ']) {
    const cursor = Buffer.from(text).toString('base64url');
    t.notOk(pattern.test(cursor), `${text} is not schema-valid`);
    t.equal(decodeCursor(cursor), undefined, `${text} is not served`);
  }
  const respelled = 'djE6MjB'; // "v1:20" with a low bit set that base64 ignores
  t.notOk(pattern.test(respelled));
  t.equal(decodeCursor(respelled), undefined);
  t.equal(decodeCursor('0'), undefined, 'the tester’s cursor=0');
  t.notOk(pattern.test('0'));
});

import type { ErrorObject } from 'ajv';
import t from 'tap';
import { validationMessage } from '../../src/http/errors/validationMessage.js';
import { createAjv } from '../../src/http/operations/ajv.js';
import { startTestApp } from '../helpers/app.js';

// A 400 names the field and says what it expects in words: never a long pattern quoted at the
// consumer, always bounded.

const longPattern = `^(?:${'[a-z]{2}[0-9]'.repeat(20)})$`;
const ajv = createAjv({ verbose: true, allErrors: false });
const messageOf = (schema: object, value: unknown) => {
  const validate = ajv.compile({ type: 'object', properties: { field: schema } });
  if (validate({ field: value })) throw new Error(`${JSON.stringify(value)} passed ${JSON.stringify(schema)}`);
  return validationMessage(validate.errors as ErrorObject[], 'body');
};

t.test('a long pattern is described in words, never quoted', async (t) => {
  const described = messageOf(
    { type: 'string', pattern: longPattern, description: 'A ticket code from the printed receipt.\n\nMore detail.' },
    'x',
  );
  t.equal(described, 'body.field does not match the expected format: A ticket code from the printed receipt.');
  const titled = messageOf({ type: 'string', pattern: longPattern, title: 'Ticket code', description: 'Long.' }, 'x');
  t.equal(titled, 'body.field does not match the expected format: Ticket code');
  t.equal(messageOf({ type: 'string', pattern: longPattern }, 'x'), 'body.field does not match the expected format');
  t.equal(messageOf({ type: 'string', pattern: '^[a-z]+$' }, '1'), 'body.field must match the pattern ^[a-z]+$');
  const wordy = messageOf({ type: 'string', pattern: longPattern, description: 'word '.repeat(100) }, 'x');
  t.ok(wordy.length < 260, 'a long description is cut');
  t.notMatch(wordy, longPattern);
});

t.test('a format names what it expects, dates with the years the database holds', async (t) => {
  t.match(messageOf({ type: 'string', format: 'date' }, '0000-01-01'), /^body\.field must be a date.*0001 to 9999/);
  t.match(
    messageOf({ type: 'string', format: 'date-time' }, '2024-01-01T00:00:00+16:00'),
    /^body\.field must be a date and time.*15:59/,
  );
  t.match(messageOf({ type: 'string', format: 'email' }, 'plain'), /^body\.field must be an email address/);
});

t.test('through HTTP: the cursor and the name say what they expect in words', async (t) => {
  const { app, auth } = await startTestApp(t, 'embedded');
  const cursor = await app.inject({ method: 'GET', url: '/v1/pets?cursor=djE6zzzz', headers: auth });
  t.equal(cursor.statusCode, 400);
  const cursorMessage = (cursor.json() as { message: string }).message;
  t.match(cursorMessage, /^query parameter 'cursor' does not match the expected format: Opaque position/);
  t.notMatch(cursorMessage, /djE6\(\?:/, 'the pattern is not quoted');
  t.ok(cursorMessage.length < 260, 'bounded');
  const name = await app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: auth,
    payload: { name: 'Re\u0007x', categoryId: 1 },
  });
  t.equal(name.statusCode, 400);
  const nameMessage = (name.json() as { message: string }).message;
  t.match(nameMessage, /^body\.name does not match the expected format: The animal's name, .*control characters/);
  t.notMatch(nameMessage, /\\x00/, 'the pattern is not quoted');
});

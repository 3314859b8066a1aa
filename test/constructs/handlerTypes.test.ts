import t from 'tap';
import { apiTypesSource } from '../../generators/apiTypes.js';
import type { BodyOf, JsonBody } from '../../src/handlers/types.js';
import { constructExample } from '../helpers/constructExamples.js';

// The types handlers are checked against (src/handlers/types.ts reads them from src/generated/api.ts), each
// construct's example spec through generators/apiTypes.ts: what its operation's type says of the construct.

/** The generated type of the example's one operation, white space folded. */
async function operationType(id: string): Promise<string> {
  const source = await apiTypesSource(constructExample(id));
  return source.split('export interface operations')[1]!.replace(/\s+/g, ' ');
}

const expectations: Record<string, RegExp[]> = {
  'media-json': [/requestBody: \{ content: \{ "application\/json": \{ name\?: string; \}; \}; \};/],
  'param-path-simple': [/path: \{ id: string; \};/],
  'param-query-form': [/query\?: \{ tag\?: string\[\]; \};/],
  'param-header-simple': [/header\?: \{ "X-Tag"\?: string; \};/],
  'schema-closed-object': [/"application\/json": \{ name\?: string; \}/],
  'response-created': [
    /201: \{ headers: \{ \[name: string\]: unknown; \}; content: \{ "application\/json": \{ name\?: string; \}; \}; \};/,
  ],
  'response-headers': [/201: \{ headers: \{ Location: string; \[name: string\]: unknown; \};/],
  'response-links': [
    /200: \{ headers: \{ \[name: string\]: unknown; \}; content: \{ "application\/json": \{ id\?: string; \}; \}; \};/,
  ],
  'servers-root': [/responses: \{ \/\*\* @description OK \*\/ 200:/],
  'security-bearer': [/responses: \{ \/\*\* @description OK \*\/ 200:/],
  'security-scopes': [/responses: \{ \/\*\* @description OK \*\/ 200:/],
};

for (const [id, patterns] of Object.entries(expectations))
  t.test(id, async (t) => {
    const type = await operationType(id);
    for (const pattern of patterns) t.match(type, pattern);
  });

t.test('deprecated-operation', async (t) => {
  t.match(await apiTypesSource(constructExample('deprecated-operation')), /@deprecated/);
});

t.test('a closed object has no index signature, so an extra property does not compile', async (t) => {
  const type = await operationType('schema-closed-object');
  t.notMatch(type.split('requestBody')[1]!.split('responses')[0], /\[key: string\]/);
});

t.test('media-json-suffix', async (t) => {
  t.match(await operationType('media-json-suffix'), /"application\/merge-patch\+json": \{ name\?: string; \}/);
  // Checked by the compiler: a handler's body is read from whichever JSON media type the operation declares.
  type Declared = { content: { 'application/merge-patch+json': { name?: string } } };
  const body: JsonBody<Declared> = { name: 'a' };
  // @ts-expect-error -- typed from application/merge-patch+json, never undefined
  const lost: JsonBody<Declared> = undefined;
  t.same([body, lost], [{ name: 'a' }, undefined]);
});

t.test('media-bytes', async (t) => {
  const type = await operationType('media-bytes');
  t.match(type, /requestBody: \{ content: \{ "image\/png": string; \}; \};/, 'the generated type of the body');
  t.match(type, /200: \{ headers: \{ \[name: string\]: unknown; \}; content: \{ "image\/png": string; \}; \};/);
  // Checked by the compiler: a handler's body of a bytes media type is its bytes, with a schema or without.
  type Declared = { content: { 'image/png': string } };
  type Bare = { content: { 'application/octet-stream': unknown } };
  const png: BodyOf<Declared> = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);
  const bare: BodyOf<Bare> = new Uint8Array([0xff]);
  // @ts-expect-error -- bytes, never the string the generated type names
  const text: BodyOf<Declared> = 'png';
  // @ts-expect-error -- bytes, never undefined
  const lost: BodyOf<Bare> = undefined;
  // JSON stays its schema's type.
  const json: BodyOf<{ content: { 'application/merge-patch+json': { name?: string } } }> = { name: 'a' };
  t.same([png, bare, text, lost, json], [png, bare, 'png', undefined, { name: 'a' }]);
});

t.test('schema-any-of', async (t) => {
  const type = await operationType('schema-any-of');
  const either = /"application\/json": components\["schemas"\]\["Named"\] \| \{ title: string; \};/;
  t.match(type.split('requestBody')[1], either, 'the body is a union of its branches');
  t.match(type.split('responses')[1], either, 'and so is the answer');
  const source = (await apiTypesSource(constructExample('schema-any-of'))).replace(/\s+/g, ' ');
  t.match(source, /status\?: components\["schemas"\]\["Status"\] \| number;/, 'a property typed by anyOf too');
});

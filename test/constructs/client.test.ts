import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { codecOf } from '../../clients/typescript/src/mediaTypes.js';
import { apiTypesSource } from '../../generators/apiTypes.js';
import { clientOperations } from '../../generators/clientOperations.js';
import { operationsSource } from '../../generators/clientSource.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { mediaTypeEntryOf } from '../../src/openapi/mediaTypes.js';
import { constructExample } from '../helpers/constructExamples.js';
import { generateClient, scriptedFetch } from '../helpers/typescriptClient.js';

// The typed client's generator, each construct on the catalogue's example spec: the table its transport
// sends from (clients/typescript/src/petStore.ts reads method, path, query, body media type, headers,
// statuses from it) and the method it writes.

/** The example's generated operations file, white space folded. */
const source = (id: string) => operationsSource(clientOperations(constructExample(id))).replace(/\s+/g, ' ');

const expectations: Record<string, RegExp[]> = {
  'media-json': [
    /body: \['application\/json'\],/,
    /example\(body: NonNullable<operations\['example'\]\['requestBody'\]>\['content'\]\['application\/json'\]/,
  ],
  'param-path-simple': [
    /path: '\/things\/\{id\}',/,
    /example\(id: operations\['example'\]\['parameters'\]\['path'\]\['id'\], options/,
  ],
  'param-query-form': [/query: \['tag'\],/, /example\(query: ExampleQuery = \{\}/],
  'param-header-simple': [/optionalHeaders: \{ xTag: 'X-Tag' \},/],
  'schema-closed-object': [/\['requestBody'\]>\['content'\]\['application\/json'\]/],
  'response-created': [/success: \{ 201: \{ content: \['application\/json'\] \} \},/, /CallPromise<ExampleResult>/],
  'response-headers': [/success: \{ 201: \{ headers: \{ 'Location': \{ type: 'string', required: true \} \} \} \},/],
  'response-links': [/success: \{ 200: \{ content: \['application\/json'\] \} \},/],
  'servers-root': [/path: '\/things',/],
  'security-bearer': [/method: 'GET', path: '\/things',/],
  'security-scopes': [/method: 'GET', path: '\/things',/],
  'deprecated-operation': [/@deprecated/],
};

for (const [id, patterns] of Object.entries(expectations))
  t.test(id, async (t) => {
    const written = source(id);
    for (const pattern of patterns) t.match(written, pattern);
  });

t.test('media-json-suffix', async (t) => {
  const written = source('media-json-suffix');
  t.match(written, /body: \['application\/merge-patch\+json'\],/, 'sent with its own Content-Type');
  t.match(
    written,
    /success: \{ 200: \{ content: \['application\/vnd\.example\+json'\] \} \},/,
    'an answer of another +json type is read as JSON',
  );
  t.match(written, /\['content'\]\['application\/merge-patch\+json'\]/, 'the body typed from its media type');
});

t.test('schema-any-of', async (t) => {
  const written = source('schema-any-of');
  t.match(written, /body: \['application\/json'\],/);
  t.match(
    written,
    /example\(body: NonNullable<operations\['example'\]\['requestBody'\]>\['content'\]\['application\/json'\]/,
  );
  // The client's body type is the handler's: the union openapi-typescript writes (test/constructs/handlerTypes.test.ts).
  const types = (await apiTypesSource(constructExample('schema-any-of'))).replace(/\s+/g, ' ');
  t.match(
    types,
    /requestBody: \{ content: \{ "application\/json": components\["schemas"\]\["Named"\] \| \{ title: string; \}; \}; \};/,
  );
});

/**
 * The example's paths beside openapi.yaml's: the client's hand-written transport (petStore.ts) reads
 * listPets and its Pet from the contract, so a package of the example alone would not build.
 */
function withPetStore(example: ReturnType<typeof constructExample>): object {
  const spec = parse(readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8')) as { paths: Record<string, unknown> };
  return { ...spec, paths: { ...spec.paths, ...(example['paths'] as Record<string, unknown>) } };
}

// Type-checked in the generated package: the body is bytes, the answer a Uint8Array.
const bytesUse = `import { PetStore } from './index.js';

const store = new PetStore({ baseUrl: 'https://things.test/v1', apiKey: 'k' });
export async function use(): Promise<number> {
  const photo: Uint8Array = await store.example(new Uint8Array([0x89, 0x50]));
  const fromBlob: Uint8Array = await store.example(new Blob([new Uint8Array([0x89, 0x50])]));
  // @ts-expect-error bytes, not a string
  await store.example('\\x89PNG');
  // @ts-expect-error bytes, not JSON
  await store.example({ photo: 'png' });
  return photo.length + fromBlob.length;
}
`;

t.test('media-bytes', async (t) => {
  const written = source('media-bytes');
  t.match(written, /body: \['image\/png'\],/, 'sent under its declared Content-Type');
  t.match(written, /success: \{ 200: \{ content: \['image\/png'\] \} \},/, 'the answer read by its media type');
  t.match(
    written,
    /accept: 'image\/png, application\/json;q=0\.1',/,
    'Accept names the photo, and the Error object the service answers a refusal with',
  );
  t.match(written, /example\(body: Uint8Array \| Blob, options: CallOptions = \{\}\)/, 'the body is bytes');

  const client = await generateClient(t, withPetStore(constructExample('media-bytes')));
  const { PetStore, PetStoreError } = await client.load();
  // Not UTF-8 (0xff never is; 0x00 is where a C string would stop): what a text decoding would mangle.
  const photo = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);
  const { fetch, requests } = scriptedFetch([
    { status: 200, raw: photo.slice(), headers: { 'content-type': 'image/png' } },
    { status: 200, raw: photo.slice(), headers: { 'content-type': 'image/png' } },
    { status: 413, body: { code: 'payload_too_large', message: 'The body is too large.', status: 413 } },
  ]);
  const store = new PetStore({ baseUrl: 'https://things.test/v1', apiKey: 'k', fetch, maxRetries: 0 });
  const { example } = store as unknown as { example(body: Uint8Array | Blob): Promise<unknown> };

  const answer = await example.call(store, photo);
  t.ok(answer instanceof Uint8Array, 'the answer is a Uint8Array');
  t.same([...(answer as Uint8Array)], [...photo], 'of the bytes that came');
  const sent = requests[0];
  t.same([...(sent?.bytes ?? [])], [...photo], 'the bytes go out as they are');
  t.equal(sent?.headers.get('content-type'), 'image/png', 'under the declared media type');
  t.equal(sent?.headers.get('accept'), 'image/png, application/json;q=0.1');

  // A Blob's own type is not the contract's: the declared one is sent.
  const fromBlob = await example.call(store, new Blob([photo], { type: 'application/octet-stream' }));
  const sentBlob = requests[1];
  t.same([...(fromBlob as Uint8Array)], [...photo], 'a Blob body is answered the same');
  t.same([...(sentBlob?.bytes ?? [])], [...photo], "a Blob's bytes go out as they are");
  t.equal(sentBlob?.headers.get('content-type'), 'image/png', "under the declared media type, not the Blob's");

  const refused = await example.call(store, photo).catch((error: unknown) => error);
  t.ok(refused instanceof PetStoreError, 'a refusal is still the Error object, in JSON');
  t.match(refused, { status: 413, code: 'payload_too_large' });

  writeFileSync(join(client.dir, 'src/bytesUse.ts'), bytesUse);
  t.equal(await client.typecheck(), '', 'tsc: no error, and every @ts-expect-error met its error');
});

t.test("the client's codecs are the service's media types (src/openapi/mediaTypes.ts)", async (t) => {
  for (const type of [
    'application/json',
    'application/merge-patch+json',
    'application/octet-stream',
    'application/pdf',
    'image/png',
    'image/svg+xml',
    'audio/mpeg',
    'video/mp4',
  ])
    t.equal(codecOf(type), mediaTypeEntryOf(type)?.client, type);
});

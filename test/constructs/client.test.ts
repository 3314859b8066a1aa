import t from 'tap';
import { apiTypesSource } from '../../generators/apiTypes.js';
import { clientOperations } from '../../generators/clientOperations.js';
import { operationsSource } from '../../generators/clientSource.js';
import { constructExample } from '../helpers/constructExamples.js';

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

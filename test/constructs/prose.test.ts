import t from 'tap';
import { operationTable, scopeList } from '../../generators/prose/operations.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';
import type { OpenApiDocument } from '../../src/openapi/document.js';
import { constructExample } from '../helpers/constructExamples.js';

// The prose generators (generators/prose/, written into the docs by npm run generate), each construct on the
// catalogue's example spec: the operation keeps its row, and what the construct says of it is stated.

const prose = (id: string) => {
  const spec = constructExample(id) as unknown as OpenApiDocument;
  return { table: operationTable(spec), scopes: scopeList(spec) };
};

const rows: Record<string, string> = {
  'media-json': '| `example` | `POST /things` |  | any key |',
  'media-json-suffix':
    '| `example` | `PATCH /things` (body `application/merge-patch+json`; answers 200 in `application/vnd.example+json`) |  | any key |',
  'media-bytes':
    '| `example` | `PUT /things` (body `image/png`, up to 1,024 bytes; answers 200 in `image/png`) |  | any key |',
  'param-path-simple': '| `example` | `GET /things/{id}` |  | any key |',
  'param-query-form': '| `example` | `GET /things` |  | any key |',
  'param-header-simple': '| `example` | `GET /things` |  | any key |',
  'schema-closed-object': '| `example` | `POST /things` |  | any key |',
  'schema-any-of': '| `example` | `POST /things` |  | any key |',
  'response-created': '| `example` | `POST /things` |  | any key |',
  'response-headers': '| `example` | `POST /things` |  | any key |',
  'response-links': '| `example` | `GET /things` |  | any key |',
  'servers-root': '| `example` | `GET /things` |  | any key |',
  'security-bearer': '| `example` | `GET /things` |  | any key |',
  'security-scopes': '| `example` | `GET /things` |  | `things:read` |',
  'deprecated-operation': '| `example` (deprecated) | `GET /things` |  | any key |',
};

for (const [id, row] of Object.entries(rows))
  t.test(id, async (t) => {
    t.equal(prose(id).table.split('\n')[2], row);
  });

t.test('security-scopes: the scope lists the operations that need it', async (t) => {
  t.equal(prose('security-scopes').scopes, '- `things:read`: example');
});

t.test(
  "media-bytes: a body states its size limit, declared or the server's; a JSON body only a declared one",
  async (t) => {
    const rowOf = (spec: JsonObject) => operationTable(spec as unknown as OpenApiDocument).split('\n')[2];
    const requestBody = (spec: JsonObject) =>
      (((spec['paths'] as JsonObject)['/things'] as JsonObject)['put'] as JsonObject)['requestBody'] as JsonObject;
    const undeclared = constructExample('media-bytes');
    delete requestBody(undeclared)['x-body-limit-bytes'];
    t.equal(
      rowOf(undeclared),
      '| `example` | `PUT /things` (body `image/png`, up to 65,536 bytes; answers 200 in `image/png`) |  | any key |',
    );
    const json = constructExample('media-json');
    const post = ((json['paths'] as JsonObject)['/things'] as JsonObject)['post'] as JsonObject;
    t.equal(rowOf(json), '| `example` | `POST /things` |  | any key |', "within the server's limit: unsaid");
    (post['requestBody'] as JsonObject)['x-body-limit-bytes'] = 2048;
    t.equal(rowOf(json), '| `example` | `POST /things` (body up to 2,048 bytes) |  | any key |');
  },
);

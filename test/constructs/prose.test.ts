import t from 'tap';
import { operationTable, scopeList } from '../../generators/prose/operations.js';
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

// Five kinds of pull request on openapi.yaml, as edits of a copy: what reviewPullRequests.test.ts reviews end to end.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { repoRoot } from '../../lib/repoRoot.js';

// Fixtures are edited by path; typing every edit would bury the change under test.
type Doc = any;

export const mainText = readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8');

/** openapi.yaml's text with `edit` applied (int64 bounds kept exact). */
export function editedSpec(edit: (doc: Doc) => void): string {
  const doc = parse(mainText, { intAsBigInt: true }) as Doc;
  edit(doc);
  return stringify(doc);
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** (a) `name` renamed `displayName` the usual way: the new field, the old one deprecated, anyOf requiring either. */
export function renameWithAnyOf(doc: Doc): void {
  doc.info.version = '1.4.0';
  const newPet = doc.components.schemas.NewPet;
  newPet.properties.name = { ...ref('PetName'), deprecated: true };
  newPet.properties.displayName = ref('PetName');
  newPet.required = ['categoryId'];
  newPet.anyOf = [{ required: ['name'] }, { required: ['displayName'] }];
  doc.components.schemas.Pet.properties.displayName = ref('PetName');
}

/** (b) The API retired to /v2: every server's base path moves, with a major version. */
export function retireToV2(doc: Doc): void {
  doc.info.version = '2.0.0';
  for (const server of doc.servers) server.url = String(server.url).replace(/\/v1$/, '/v2');
}

/** (c) A large additive change: a resource under the pet with two operations, a query parameter, a response field. */
export function largeAdditive(doc: Doc): void {
  doc.info.version = '1.4.0';
  const text = { type: 'string', minLength: 1, maxLength: 500 };
  doc.components.schemas.Note = {
    description: 'A note about an animal.',
    type: 'object',
    additionalProperties: false,
    required: ['id', 'text'],
    properties: { id: ref('PetId'), text },
  };
  doc.components.schemas.NewNote = {
    description: 'A note to add.',
    type: 'object',
    additionalProperties: false,
    required: ['text'],
    properties: { text },
  };
  const getPet = doc.paths['/pets/{petId}'].get;
  const errors = Object.fromEntries(['400', '401', '404', '500'].map((status) => [status, getPet.responses[status]]));
  const json = (schema: unknown) => ({ 'application/json': { schema } });
  doc.paths['/pets/{petId}/notes'] = {
    parameters: [{ $ref: '#/components/parameters/PetId' }],
    get: {
      operationId: 'listNotes',
      summary: "List an animal's notes",
      tags: getPet.tags,
      security: [{ bearerAuth: ['pets:read'] }],
      responses: {
        '200': { description: 'The notes', content: json({ type: 'array', maxItems: 100, items: ref('Note') }) },
        ...errors,
      },
    },
    post: {
      operationId: 'createNote',
      summary: 'Add a note to an animal',
      tags: getPet.tags,
      security: [{ bearerAuth: ['pets:write'] }],
      requestBody: { required: true, content: json(ref('NewNote')) },
      responses: { '201': { description: 'The note', content: json(ref('Note')) }, ...errors },
    },
  };
  doc.paths['/pets'].get.parameters.push({
    name: 'name',
    in: 'query',
    required: false,
    description: 'Only animals of this name.',
    schema: ref('PetName'),
  });
  doc.components.schemas.Pet.properties.nickname = { type: 'string', maxLength: 100 };
}

/** (d) Shared components changed: the PetId parameter narrowed, the X-Request-Id header allowed longer. */
export function componentChanges(doc: Doc): void {
  doc.components.parameters.PetId.schema.minimum = 1;
  doc.components.parameters.PetId.schema.maximum = 9007199254740991;
  doc.components.headers.RequestId.schema.maxLength = 256;
}

/** (e) An additive change on top of unreleased main, leaving info.version as main has it. */
export function additiveOnMain(doc: Doc): void {
  doc.components.schemas.Pet.properties.nickname = { type: 'string', maxLength: 100 };
}

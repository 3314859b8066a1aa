// Five kinds of pull request on openapi.yaml, as edits of a copy: what reviewPullRequests.test.ts reviews end to end.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { repoRoot } from '../../lib/repoRoot.js';

// Fixtures are edited by path; typing every edit would bury the change under test.
type Doc = any;

export const mainText = readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8');
const mainDoc = parse(mainText) as Doc;

/**
 * '' or the first number from 2 on that `isTaken` does not refuse: the edits add names the spec lacks whatever it
 * holds by then (a worked example adding notes of its own must not turn "added" into "changed").
 */
export function freeSuffix(isTaken: (suffix: string) => boolean): string {
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? '' : String(n);
    if (!isTaken(suffix)) return suffix;
  }
}

const schemas = (doc: Doc): Record<string, Doc> => (doc.components?.schemas ?? {}) as Record<string, Doc>;
/** The object a local `$ref` names, or the node itself. */
const resolved = (doc: Doc, node: Doc): unknown =>
  typeof node?.$ref === 'string' && node.$ref.startsWith('#/')
    ? node.$ref
        .slice(2)
        .split('/')
        .reduce((at: Doc, key: string) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')] as unknown, doc)
    : (node as unknown);
const operationIds = (doc: Doc): string[] =>
  Object.values<Record<string, { operationId?: string }>>(doc.paths).flatMap((item) =>
    Object.values(item).flatMap((operation) => (operation?.operationId ? [operation.operationId] : [])),
  );

/** The names the additive edits give what they add, each one the spec does not use. */
export const fresh = (() => {
  const petProperties = Object.keys(schemas(mainDoc).Pet?.properties ?? {});
  const listPetsQuery: unknown[] = (mainDoc.paths['/pets'].get.parameters ?? []).map(
    (parameter: Doc) => (resolved(mainDoc, parameter) as { name?: string } | undefined)?.name,
  );
  const ids = operationIds(mainDoc);
  const noteSuffix = freeSuffix(
    (suffix) =>
      [`Note${suffix}`, `NewNote${suffix}`].some((name) => name in schemas(mainDoc)) ||
      [`listNotes${suffix}`, `createNote${suffix}`].some((id) => ids.includes(id)) ||
      `/pets/{petId}/notes${suffix}` in mainDoc.paths,
  );
  const propertySuffix = freeSuffix((suffix) => petProperties.includes(`nickname${suffix}`));
  const querySuffix = freeSuffix((suffix) => listPetsQuery.includes(`name${suffix}`));
  return {
    /** A response property Pet lacks. */
    property: `nickname${propertySuffix}`,
    /** A query parameter listPets lacks. */
    query: `name${querySuffix}`,
    /** A collection under the pet, its schemas and operations. */
    notes: {
      path: `/pets/{petId}/notes${noteSuffix}`,
      schema: `Note${noteSuffix}`,
      newSchema: `NewNote${noteSuffix}`,
      list: `listNotes${noteSuffix}`,
      create: `createNote${noteSuffix}`,
    },
  };
})();

/** The statuses of the responses in `doc` whose schema reaches the schema component `name`, by operationId. */
export function answersCarrying(doc: Doc, name: string): Map<string, string[]> {
  const target = `#/components/schemas/${name}`;
  const reaches = (node: unknown, seen: Set<string>): boolean => {
    if (Array.isArray(node)) return node.some((item) => reaches(item, seen));
    if (node === null || typeof node !== 'object') return false;
    const { $ref } = node as { $ref?: unknown };
    if (typeof $ref === 'string') {
      if ($ref === target) return true;
      if (seen.has($ref)) return false;
      return reaches(resolved(doc, node), new Set([...seen, $ref]));
    }
    return Object.values(node).some((value) => reaches(value, seen));
  };
  const answers = new Map<string, string[]>();
  for (const item of Object.values<Record<string, Doc>>(doc.paths))
    for (const operation of Object.values(item)) {
      if (!operation?.operationId || !operation.responses) continue;
      const statuses = Object.entries<Doc>(operation.responses)
        .filter(([, response]) => reaches(response.$ref ? response : response.content, new Set()))
        .map(([status]) => status);
      if (statuses.length > 0) answers.set(operation.operationId, statuses);
    }
  return answers;
}

/** openapi.yaml's text with `edit` applied (int64 bounds kept exact). */
export function editedSpec(edit: (doc: Doc) => void): string {
  const doc = parse(mainText, { intAsBigInt: true }) as Doc;
  edit(doc);
  return stringify(doc);
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * (a) `name` renamed `displayName`: a body with either. The usual way (the old field deprecated beside a `$ref`, an
 * anyOf of bare `required` lists) uses constructs docs/constructs.md refuses, which review refuses too.
 */
export function renameWithAnyOf(doc: Doc): void {
  doc.info.version = '1.4.0';
  const { description, properties } = doc.components.schemas.NewPet;
  // Each branch a whole object (docs/constructs.md#schema-any-of): the old name, or the new one.
  const named = (field: string) => ({
    type: 'object',
    additionalProperties: false,
    required: [field, 'categoryId'],
    properties: { [field]: ref('PetName'), categoryId: properties.categoryId, status: properties.status },
  });
  doc.components.schemas.NewPet = { description, anyOf: [named('name'), named('displayName')] };
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
  const { notes } = fresh;
  const text = { type: 'string', minLength: 1, maxLength: 500 };
  doc.components.schemas[notes.schema] = {
    description: 'A note about an animal.',
    type: 'object',
    additionalProperties: false,
    required: ['id', 'text'],
    properties: { id: ref('PetId'), text },
  };
  doc.components.schemas[notes.newSchema] = {
    description: 'A note to add.',
    type: 'object',
    additionalProperties: false,
    required: ['text'],
    properties: { text },
  };
  const getPet = doc.paths['/pets/{petId}'].get;
  const errors = Object.fromEntries(['400', '401', '404', '500'].map((status) => [status, getPet.responses[status]]));
  const json = (schema: unknown) => ({ 'application/json': { schema } });
  doc.paths[notes.path] = {
    parameters: [{ $ref: '#/components/parameters/PetId' }],
    get: {
      operationId: notes.list,
      summary: "List an animal's notes",
      tags: getPet.tags,
      security: [{ bearerAuth: ['pets:read'] }],
      responses: {
        '200': { description: 'The notes', content: json({ type: 'array', maxItems: 100, items: ref(notes.schema) }) },
        ...errors,
      },
    },
    post: {
      operationId: notes.create,
      summary: 'Add a note to an animal',
      tags: getPet.tags,
      security: [{ bearerAuth: ['pets:write'] }],
      requestBody: { required: true, content: json(ref(notes.newSchema)) },
      responses: { '201': { description: 'The note', content: json(ref(notes.schema)) }, ...errors },
    },
  };
  doc.paths['/pets'].get.parameters.push({
    name: fresh.query,
    in: 'query',
    required: false,
    description: 'Only animals of this name.',
    schema: ref('PetName'),
  });
  doc.components.schemas.Pet.properties[fresh.property] = { type: 'string', maxLength: 100 };
}

/** (d) Shared components changed: the PetId parameter narrowed, the X-Request-Id header allowed longer. */
export function componentChanges(doc: Doc): void {
  doc.components.parameters.PetId.schema.minimum = 1;
  doc.components.parameters.PetId.schema.maximum = 9007199254740991;
  doc.components.headers.RequestId.schema.maxLength = 256;
}

/** (e) An additive change on top of unreleased main, leaving info.version as main has it. */
export function additiveOnMain(doc: Doc): void {
  doc.components.schemas.Pet.properties[fresh.property] = { type: 'string', maxLength: 100 };
}

/**
 * (f) createPet newly deprecated with its sunset at `sunset`, declared as docs/contract.md#deprecating-an-operation
 * asks (the Deprecation, Sunset and Link headers on its 201, and the 410). With a sunset already past on the day
 * judged, the service answers 410 from the deploy: breaking; with a later one, a warning.
 */
export function deprecateCreatePet(sunset: string) {
  return (doc: Doc): void => {
    doc.info.version = '1.4.0';
    const createPet = doc.paths['/pets'].post;
    Object.assign(createPet, {
      deprecated: true,
      'x-deprecated-at': '2026-11-01T00:00:00Z',
      'x-sunset': sunset,
      'x-deprecation-docs': '/docs#/pets/createPet',
    });
    const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
    Object.assign(createPet.responses['201'].headers, {
      Deprecation: header('Deprecation'),
      Sunset: header('Sunset'),
      Link: header('DeprecationLink'),
    });
    createPet.responses['410'] = { $ref: '#/components/responses/Sunset' };
  };
}

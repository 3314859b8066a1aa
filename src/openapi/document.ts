import { readFileSync } from 'node:fs';
import { basePathOf } from './basePath.js';
import type {
  OpenApiDocument,
  OperationEntry,
  OperationObject,
  ParameterObject,
  RouteEntry,
  SecurityRequirement,
} from './types.js';

export type * from './types.js';

export const httpMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

// Written by `npm run generate` next to src/generated/api.ts and copied
// beside the compiled code by `npm run build`: the same place relative to
// this module whether it runs from src/ or dist/.
function generatedText(name: string): string {
  return readFileSync(new URL(`../generated/${name}`, import.meta.url), 'utf8');
}

function generated(name: string, reviver?: (key: string, value: unknown) => unknown): unknown {
  return JSON.parse(generatedText(name), reviver);
}

/**
 * The published spec (openapi.yaml without its internal servers, published.ts)
 * as /v1/openapi.json serves it, every integer with the digits the YAML has
 * (the int64 bounds included; the parsed document below holds JavaScript
 * numbers, which round them), or as /v1/openapi.yaml serves it, the
 * checked-in text with the internal servers' lines cut out.
 */
export function publishedText(format: 'json' | 'yaml'): string {
  return generatedText(`published.${format}`);
}

/**
 * A JSON.parse reviver that makes equal objects one object. A schema the spec
 * shares by $ref (Error, Pet) is one object in the glue's output but many in
 * its JSON; ajv caches what it compiled by object, so without this every
 * response would compile its own copy of the Error schema.
 */
function sharingEqualObjects(): (key: string, value: unknown) => unknown {
  const seen = new Map<string, unknown>();
  return (_key, value) => {
    if (value === null || typeof value !== 'object') return value;
    const text = JSON.stringify(value);
    const first = seen.get(text);
    if (first !== undefined) return first;
    seen.set(text, value);
    return value;
  };
}

let loaded: OpenApiDocument | undefined;

/**
 * openapi.yaml, the single source of truth, read once per process: from its
 * JSON form in src/generated (parsing the YAML took about 100 ms of every
 * start; a test proves the two are the same document).
 */
export function loadOpenApiDocument(): OpenApiDocument {
  loaded ??= generated('openapi.json') as OpenApiDocument;
  return loaded;
}

/** The API's routes as fastify-openapi-glue derives them from the spec, computed by `npm run generate`. */
export function loadRouteTable(): RouteEntry[] {
  return generated('routes.json', sharingEqualObjects()) as RouteEntry[];
}

let basePath: string | undefined;

/** The base path of the API (/v1), from openapi.yaml's servers. */
export function apiBasePath(): string {
  basePath ??= basePathOf(loadOpenApiDocument());
  return basePath;
}

export function listOperations(spec: OpenApiDocument): OperationEntry[] {
  const entries: OperationEntry[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of httpMethods) {
      const operation = item[method];
      if (operation) entries.push({ method: method.toUpperCase(), path, operation });
    }
  }
  return entries;
}

/** The security requirements that apply to an operation (its own, else the document's). */
export function securityOf(spec: OpenApiDocument, operation: OperationObject): SecurityRequirement[] {
  return operation.security ?? spec.security ?? [];
}

const parameterRef = /^#\/components\/parameters\/([^/]+)$/;

/** An operation's parameters, with references to components/parameters resolved. */
export function parametersOf(spec: OpenApiDocument, operation: OperationObject): ParameterObject[] {
  return (operation.parameters ?? []).map((parameter) => {
    if (!('$ref' in parameter)) return parameter;
    const name = parameterRef.exec(parameter.$ref)?.[1];
    const resolved = name === undefined ? undefined : spec.components.parameters?.[name];
    if (!resolved)
      throw new Error(
        `openapi.yaml: operation ${operation.operationId} has parameter ${parameter.$ref}, which does not resolve`,
      );
    return resolved;
  });
}

/**
 * An operation's scope requirements: for each of its security requirements
 * (any one suffices), the scopes it lists under every scheme (all needed).
 * A requirement without scopes needs none: the operation asks for no scope.
 */
export function scopeRequirementsOf(spec: OpenApiDocument, operation: OperationObject): string[][] {
  const requirements = securityOf(spec, operation).map((requirement) => [
    ...new Set(Object.values(requirement).flat()),
  ]);
  return requirements.some((scopes) => scopes.length === 0) ? [] : requirements;
}

/** The header that makes an operation idempotent when it declares it (draft-ietf-httpapi-idempotency-key-header). */
export const idempotencyKeyHeader = 'Idempotency-Key';

/** The operations that declare an Idempotency-Key header, in the spec's order. */
export function idempotentOperations(spec: OpenApiDocument): OperationEntry[] {
  const key = idempotencyKeyHeader.toLowerCase();
  return listOperations(spec).filter(({ operation }) =>
    parametersOf(spec, operation).some(
      (parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === key,
    ),
  );
}

/** Every scope some operation of the spec requires, sorted: what an unrestricted key holds today. */
export function declaredScopes(spec: OpenApiDocument): string[] {
  const scopes = listOperations(spec).flatMap(({ operation }) => scopeRequirementsOf(spec, operation).flat());
  return [...new Set(scopes)].sort();
}

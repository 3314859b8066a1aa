// The prose lists that openapi.yaml decides: which operations there are, how each is called, and the scope
// each needs. Written into the spec's own descriptions and the docs by npm run generate (generators/docFacts.ts).
import { dereference, isObject, type Json, type JsonObject } from '../../lib/openapi/dereference.js';
import { essenceOf, isBytesMediaType } from '../../src/openapi/mediaTypes.js';
import { bodyLimitExtension } from '../../src/http/operations/bodyLimit.js';
import { httpLimits } from '../../src/http/limits.js';
import {
  declaredScopes,
  idempotentOperations,
  listOperations,
  scopeRequirementsOf,
  type OpenApiDocument,
  type OperationEntry,
} from '../../src/openapi/document.js';

const code = (text: string) => `\`${text}\``;

/** What a key needs for an operation: its scope alternatives, or that it needs none. */
function scopeText(spec: OpenApiDocument, entry: OperationEntry): string {
  const requirements = scopeRequirementsOf(spec, entry.operation);
  if (requirements.length === 0) return 'any key';
  return requirements.map((scopes) => scopes.map(code).join(' and ')).join(' or ');
}

function sunsetText(entry: OperationEntry): string {
  const { operation } = entry;
  if (operation.deprecated !== true) return '';
  const sunset = operation['x-sunset'];
  return typeof sunset === 'string' ? ` (sunset ${sunset.slice(0, 10)})` : ' (deprecated)';
}

const objectAt = (value: Json | undefined): JsonObject => (isObject(value) ? value : {});

/**
 * The most bytes a request body may have, when a reader needs it: the declared x-body-limit-bytes, else, for a bytes
 * body (a photo), the server's limit (src/http/limits.ts); a JSON body within the server's limit goes unsaid.
 */
function bodyLimitText(requestBody: JsonObject): string | undefined {
  const declared = requestBody[bodyLimitExtension];
  const bytes = Object.keys(objectAt(requestBody['content'])).some(isBytesMediaType);
  const limit = typeof declared === 'number' ? declared : bytes ? httpLimits.bodyLimitBytes : undefined;
  return limit === undefined ? undefined : `up to ${limit.toLocaleString('en-US')} bytes`;
}

/**
 * The media types of an operation's bodies other than application/json, the one the docs take for granted (a
 * +json type: application/merge-patch+json, application/problem+json; bytes: image/png), with the request body's
 * size limit when it has one to say: the request body's, and each answer's with the statuses that answer in it.
 * Empty when every body is application/json within the server's limit.
 */
function mediaTypeText(document: JsonObject, entry: OperationEntry): string {
  const operation = objectAt(objectAt(objectAt(document['paths'])[entry.path])[entry.method.toLowerCase()]);
  const named = (content: Json | undefined) =>
    Object.keys(objectAt(content)).filter((type) => essenceOf(type) !== 'application/json');
  const requestBody = objectAt(operation['requestBody']);
  const sent = named(requestBody['content']);
  const body = [sent.map(code).join(' or '), bodyLimitText(requestBody)].filter((part) => part).join(', ');
  const answered = new Map<string, string[]>();
  for (const [status, response] of Object.entries(objectAt(operation['responses'])))
    for (const type of named(objectAt(response)['content']))
      answered.set(type, [...(answered.get(type) ?? []), status]);
  const parts = [
    ...(body ? [`body ${body}`] : []),
    ...[...answered].map(([type, statuses]) => `answers ${statuses.join(', ')} in ${code(type)}`),
  ];
  return parts.length > 0 ? ` (${parts.join('; ')})` : '';
}

/** A Markdown table: each operation, its request (and a media type not application/json) and its scope, in order. */
export function operationTable(spec: OpenApiDocument): string {
  const document = dereference(spec as unknown as JsonObject);
  const rows = listOperations(spec).map(
    (entry) =>
      `| ${code(entry.operation.operationId)}${sunsetText(entry)} | ${code(`${entry.method} ${entry.path}`)}` +
      `${mediaTypeText(document, entry)} | ${entry.operation.summary ?? ''} | ${scopeText(spec, entry)} |`,
  );
  return ['| Operation | Request | What it does | Scope |', '|---|---|---|---|', ...rows].join('\n');
}

/** A Markdown list: each declared scope and the operations that need it. */
export function scopeList(spec: OpenApiDocument): string {
  return declaredScopes(spec)
    .map((scope) => {
      const operations = listOperations(spec)
        .filter(({ operation }) => scopeRequirementsOf(spec, operation).some((scopes) => scopes.includes(scope)))
        .map(({ operation }) => operation.operationId);
      return `- ${code(scope)}: ${operations.join(', ')}`;
    })
    .join('\n');
}

/** A Markdown list: each operation that declares an Idempotency-Key header, and its request. */
export function idempotentOperationList(spec: OpenApiDocument): string {
  return idempotentOperations(spec)
    .map((entry) => `- ${code(entry.operation.operationId)}: ${code(`${entry.method} ${entry.path}`)}`)
    .join('\n');
}

/** The declared scopes inline: `pets:read`, `pets:write`. */
export function scopesInline(spec: OpenApiDocument): string {
  return declaredScopes(spec).map(code).join(', ');
}

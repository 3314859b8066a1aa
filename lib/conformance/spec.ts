import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { assertSupportedBy } from '../constructs/refusals.js';
import { dereference, type JsonObject } from '../openapi/dereference.js';
import { httpMethods } from '../../src/openapi/document.js';
import { specPath } from '../../src/openapi/files.js';
import { mediaTypeEntryOf } from '../../src/openapi/mediaTypes.js';

/**
 * openapi.yaml read for the conformance suite and `npm run verify` on their
 * own terms: parsed and dereferenced here, validated by an ajv of our own, so
 * that a mistake in the server's loading or validation of the spec cannot
 * hide itself.
 */

export type Schema = JsonObject;

export interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required: boolean;
  schema: Schema;
}

export interface ResponseHeader {
  name: string;
  required: boolean;
  validate: ValidateFunction;
  schema: Schema;
}

/** An OpenAPI link of a response: an operation its answer leads to, and where each parameter's value comes from. */
export interface ResponseLink {
  name: string;
  operationId: string;
  /** Parameter name to runtime expression, e.g. petId: $response.body#/id. */
  parameters: Record<string, string>;
}

/**
 * How a body of a media type is drawn, sent and read, as its entry in src/openapi/mediaTypes.ts says:
 * `json`, a value of its schema as JSON text; `bytes`, arbitrary bytes sent and read as they are.
 */
export type BodyKind = 'json' | 'bytes';

const kindOf = (mediaType: string): BodyKind | undefined => {
  const sample = mediaTypeEntryOf(mediaType)?.sample;
  return sample === undefined ? undefined : sample === 'bytes' ? 'bytes' : 'json';
};

/** The first media type of a content map that some entry of src/openapi/mediaTypes.ts covers. */
function readableMediaType(content: Record<string, JsonObject> | undefined): string | undefined {
  return Object.keys(content ?? {}).find((mediaType) => kindOf(mediaType) !== undefined);
}

export interface DeclaredResponse {
  status: string;
  /** The media type its body is declared in (application/json, application/problem+json, image/png...). */
  mediaType?: string;
  /** How that body is read: parsed as JSON and validated, or taken as bytes. */
  kind?: BodyKind;
  /** Validates the JSON body; undefined when the response declares no content, or bytes. */
  validateBody?: ValidateFunction;
  /** The JSON body's schema, dereferenced. */
  schema?: Schema;
  headers: ResponseHeader[];
  links: ResponseLink[];
}

export interface RequestBody {
  required: boolean;
  mediaType: string;
  /** Whether values are drawn from its schema and sent as JSON text, or drawn as bytes and sent as they are. */
  kind: BodyKind;
  schema: Schema;
  /** The operation's x-body-limit-bytes: the largest body it takes, when it says (else the server's limit). */
  limitBytes?: number;
}

export interface Operation {
  operationId: string;
  method: string;
  /** The spec's path template, e.g. /pets/{petId}. */
  path: string;
  parameters: Parameter[];
  body?: RequestBody;
  responses: Map<string, DeclaredResponse>;
  secured: boolean;
  /**
   * The scopes its first security requirement lists (`bearerAuth: [pets:read]`):
   * a key without them is refused with 403. Empty: no scope asked.
   */
  scopes: string[];
  /** A deprecated operation's x-deprecated-at and x-sunset. */
  deprecation?: Deprecation;
}

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats.default(ajv);

function compile(schema: Schema): ValidateFunction {
  return ajv.compile(schema);
}

/** Whether a schema accepts a value (a parameter's, as the service will parse it). */
export const accepts = (schema: Schema, value: unknown): boolean => compile(schema)(value) as boolean;

/** openapi.yaml as checked in, parsed (not dereferenced). */
export function readLocalSpec(): JsonObject {
  return parse(readFileSync(specPath, 'utf8')) as JsonObject;
}

/** A deprecated operation's x-deprecated-at, x-sunset and x-replacement.href. */
export interface Deprecation {
  deprecatedAt: Date;
  sunset?: Date;
  replacement?: string;
}

function deprecationOf(operation: JsonObject): Deprecation {
  const sunset = operation['x-sunset'];
  const replacement = (operation['x-replacement'] as JsonObject | undefined)?.['href'];
  return {
    deprecatedAt: new Date(String(operation['x-deprecated-at'])),
    ...(typeof sunset === 'string' ? { sunset: new Date(sunset) } : {}),
    ...(typeof replacement === 'string' ? { replacement } : {}),
  };
}

export { isJsonMediaType } from '../../src/openapi/mediaTypes.js';

/**
 * The operations of `raw` as the suite and verify read them. A media type the model cannot read is a
 * ConstructRefusedError naming it and its row of docs/constructs.md (npm run generate refuses it first).
 */
export function loadContract(raw: JsonObject = readLocalSpec()): { document: JsonObject; operations: Operation[] } {
  assertSupportedBy('conformance', raw, { group: 'Media types' });
  const document = dereference(raw);
  const globalSecurity = (document['security'] as unknown[] | undefined) ?? [];
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document['paths'] as Record<string, JsonObject>)) {
    for (const method of httpMethods) {
      const operation = item[method] as JsonObject | undefined;
      if (!operation) continue;
      const parameters = [
        ...((item['parameters'] as unknown as Parameter[]) ?? []),
        ...((operation['parameters'] as unknown as Parameter[]) ?? []),
      ];
      const requestBody = operation['requestBody'] as JsonObject | undefined;
      let body: Operation['body'];
      if (requestBody) {
        const content = requestBody['content'] as Record<string, JsonObject>;
        const mediaType = readableMediaType(content);
        const limitBytes = requestBody['x-body-limit-bytes'];
        if (mediaType !== undefined)
          body = {
            required: requestBody['required'] === true,
            mediaType,
            kind: kindOf(mediaType)!,
            schema: content[mediaType]!['schema'] as Schema,
            ...(typeof limitBytes === 'number' ? { limitBytes } : {}),
          };
      }
      const responses = new Map<string, DeclaredResponse>();
      for (const [status, response] of Object.entries(operation['responses'] as Record<string, JsonObject>)) {
        const content = response['content'] as Record<string, JsonObject> | undefined;
        const mediaType = readableMediaType(content);
        const kind = mediaType === undefined ? undefined : kindOf(mediaType);
        // A bytes body's schema (type string, contentMediaType) says nothing its bytes can be checked against.
        const schema = (kind === 'json' ? content?.[mediaType!]?.['schema'] : undefined) as Schema | undefined;
        const headers = Object.entries((response['headers'] as Record<string, JsonObject> | undefined) ?? {}).map(
          ([name, header]) => ({
            name: name.toLowerCase(),
            required: header['required'] === true,
            schema: header['schema'] as Schema,
            validate: compile(header['schema'] as Schema),
          }),
        );
        const links = Object.entries((response['links'] as Record<string, JsonObject> | undefined) ?? {}).map(
          ([name, link]) => ({
            name,
            operationId: String(link['operationId']),
            parameters: (link['parameters'] ?? {}) as Record<string, string>,
          }),
        );
        responses.set(status, {
          status,
          headers,
          links,
          ...(mediaType === undefined ? {} : { mediaType, kind: kind! }),
          ...(schema ? { schema, validateBody: compile(schema) } : {}),
        });
      }
      const security = (operation['security'] as unknown[] | undefined) ?? globalSecurity;
      operations.push({
        operationId: String(operation['operationId']),
        method: method.toUpperCase(),
        path,
        parameters,
        ...(body ? { body } : {}),
        responses,
        secured: security.length > 0,
        scopes: Object.values((security[0] ?? {}) as Record<string, string[]>).flat(),
        ...(operation['deprecated'] === true ? { deprecation: deprecationOf(operation) } : {}),
      });
    }
  }
  return { document, operations };
}

/** The base path every operation is served under, from the first server URL. */
export function basePath(document: JsonObject): string {
  const servers = document['servers'] as Array<{ url: string }>;
  return new URL(servers[0]!.url).pathname.replace(/\/$/, '');
}

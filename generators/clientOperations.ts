// What the TypeScript client's methods are, read from an OpenAPI document: one per operationId, its
// signature from where the operation puts its parts (path parameters in path order, the body, the query,
// the call's options), its retries from its method and whether it declares Idempotency-Key, its pages from
// a declared Link on an array answer, its deprecation from `deprecated` and `x-sunset`. A part the client
// cannot send as the contract says (another media type, a required header or cookie, a query style other
// than form) fails generation rather than making a method that breaks the contract.
import { isObject, type Json, type JsonObject } from '../lib/openapi/dereference.js';

const methodsInOrder = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const idempotencyKeyHeader = 'idempotency-key';
/** application/json, or a JSON-based type such as application/merge-patch+json (RFC 6839 +json). */
const jsonMediaType = /^application\/(?:[\w.-]+\+)?json$/;
const identifier = /^[A-Za-z_$][\w$]*$/;

export interface ClientOperation {
  operationId: string;
  method: Uppercase<(typeof methodsInOrder)[number]>;
  path: string;
  summary: string;
  pathParameters: string[];
  query: { names: string[]; required: boolean } | undefined;
  body: { required: boolean; mediaType: string; schemaName: string | undefined } | undefined;
  idempotencyKey: boolean;
  /** The required header parameters other than Idempotency-Key: the caller gives them (options.headers). */
  headers: string[];
  /** Each 2xx status, with its JSON body's media type (undefined without a body) and schema name (if a $ref). */
  success: { status: number; mediaType: string | undefined; schemaName: string | undefined }[];
  /** Whether its answers are pages: a GET whose 2xx declares Link and carries an array. */
  pages: boolean;
  deprecation:
    | {
        sunset: string | undefined;
        replacement: string | undefined;
        replacementHref: string | undefined;
        gone: boolean;
      }
    | undefined;
}

/** Follows local $refs until a node that is not one. */
function resolve(document: JsonObject, node: Json | undefined): Json | undefined {
  for (let hops = 0; isObject(node) && typeof node['$ref'] === 'string'; hops++) {
    const ref = node['$ref'];
    if (!ref.startsWith('#/') || hops > 32) throw new Error(`openapi: cannot resolve $ref ${ref}`);
    node = ref
      .slice(2)
      .split('/')
      .reduce<Json | undefined>(
        (at, key) => (isObject(at) ? at[key.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined),
        document,
      );
    if (node === undefined) throw new Error(`openapi: unresolved $ref ${ref}`);
  }
  return node;
}

function object(document: JsonObject, node: Json | undefined): JsonObject {
  const resolved = resolve(document, node);
  return isObject(resolved) ? resolved : {};
}

/** The name under components/schemas a schema refers to, if it is a reference to one. */
function schemaNameOf(schema: Json | undefined): string | undefined {
  const ref = isObject(schema) ? schema['$ref'] : undefined;
  return typeof ref === 'string' ? /^#\/components\/schemas\/([^/]+)$/.exec(ref)?.[1] : undefined;
}

function fail(operationId: string, message: string): never {
  throw new Error(`openapi: operation ${operationId}: ${message}; the client generator does not support it`);
}

/** The operation's parameters and its path item's, the operation's winning on the same name and place. */
function parametersOf(document: JsonObject, item: JsonObject, operation: JsonObject): JsonObject[] {
  const byKey = new Map<string, JsonObject>();
  for (const list of [item['parameters'], operation['parameters']])
    for (const raw of Array.isArray(list) ? list : []) {
      const parameter = object(document, raw);
      byKey.set(`${String(parameter['in'])}:${String(parameter['name'])}`, parameter);
    }
  return [...byKey.values()];
}

/** Form style, exploded, of a scalar or an array of scalars: `?id=1&id=7`, what the transport sends. */
/** A header name the generated code can quote as it is. */
function identifierFree(name: string): boolean {
  return /^[A-Za-z0-9-]+$/.test(name);
}

function querySupported(document: JsonObject, parameter: JsonObject): boolean {
  const style = parameter['style'] ?? 'form';
  const schema = object(document, parameter['schema']);
  const items = schema['type'] === 'array' ? object(document, schema['items']) : schema;
  return (
    style === 'form' &&
    parameter['explode'] !== false &&
    parameter['content'] === undefined &&
    items['type'] !== 'object' &&
    items['type'] !== 'array'
  );
}

function readOperation(
  document: JsonObject,
  path: string,
  method: (typeof methodsInOrder)[number],
  item: JsonObject,
  operation: JsonObject,
): ClientOperation {
  const operationId = operation['operationId'];
  if (typeof operationId !== 'string' || !identifier.test(operationId))
    throw new Error(`openapi: ${method.toUpperCase()} ${path} needs an operationId that is a JavaScript identifier`);
  const parameters = parametersOf(document, item, operation);
  const pathParameters = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? '');
  for (const name of pathParameters) {
    if (!identifier.test(name)) fail(operationId, `path parameter {${name}} is not a JavaScript identifier`);
    if (!parameters.some((parameter) => parameter['in'] === 'path' && parameter['name'] === name))
      fail(operationId, `path parameter {${name}} is not declared`);
  }
  const queryParameters = parameters.filter((parameter) => parameter['in'] === 'query');
  for (const parameter of queryParameters)
    if (!querySupported(document, parameter))
      fail(operationId, `query parameter ${String(parameter['name'])}: not a scalar or array of scalars in form style`);
  let idempotencyKey = false;
  const headers: string[] = [];
  for (const parameter of parameters.filter(({ in: place }) => place === 'header' || place === 'cookie')) {
    const name = String(parameter['name']);
    if (parameter['in'] === 'header' && name.toLowerCase() === idempotencyKeyHeader) idempotencyKey = true;
    else if (parameter['required'] !== true) continue;
    else if (parameter['in'] === 'header' && identifierFree(name)) headers.push(name);
    else fail(operationId, `required ${String(parameter['in'])} ${name}`);
  }
  return {
    operationId,
    method: method.toUpperCase() as ClientOperation['method'],
    path,
    summary: typeof operation['summary'] === 'string' ? operation['summary'] : operationId,
    pathParameters,
    query:
      queryParameters.length === 0
        ? undefined
        : {
            names: queryParameters.map((parameter) => String(parameter['name'])),
            required: queryParameters.some((parameter) => parameter['required'] === true),
          },
    body: bodyOf(document, operationId, operation),
    idempotencyKey,
    headers,
    ...successOf(document, operationId, method, operation),
    deprecation: deprecationOf(operation),
  };
}

function bodyOf(document: JsonObject, operationId: string, operation: JsonObject): ClientOperation['body'] {
  if (operation['requestBody'] === undefined) return undefined;
  const body = object(document, operation['requestBody']);
  const content = object(document, body['content']);
  const mediaType = jsonTypeOf(operationId, 'request body', content);
  if (mediaType === undefined) fail(operationId, 'a request body without content');
  return {
    required: body['required'] === true,
    mediaType,
    schemaName: schemaNameOf(object(document, content[mediaType])['schema']),
  };
}

/** The one JSON media type of a content map (undefined when it is empty); any other fails. */
function jsonTypeOf(operationId: string, what: string, content: JsonObject): string | undefined {
  const types = Object.keys(content);
  if (types.length > 1 || types.some((type) => !jsonMediaType.test(type)))
    fail(operationId, `a ${what} in ${types.join(', ')} (one JSON media type is)`);
  return types[0];
}

function successOf(
  document: JsonObject,
  operationId: string,
  method: string,
  operation: JsonObject,
): Pick<ClientOperation, 'success' | 'pages'> {
  const success: ClientOperation['success'] = [];
  let pages = false;
  for (const [key, raw] of Object.entries(object(document, operation['responses']))) {
    if (!/^2\d\d$/.test(key)) {
      if (/^2/i.test(key)) fail(operationId, `the status range ${key}`);
      continue;
    }
    const response = object(document, raw);
    const content = isObject(response['content']) ? response['content'] : {};
    const mediaType = jsonTypeOf(operationId, `${key} answer`, content);
    const schema = mediaType === undefined ? undefined : object(document, content[mediaType])['schema'];
    success.push({ status: Number(key), mediaType, schemaName: schemaNameOf(schema) });
    const headers = Object.keys(object(document, response['headers'])).map((name) => name.toLowerCase());
    if (method === 'get' && headers.includes('link') && object(document, schema)['type'] === 'array') pages = true;
  }
  if (success.length === 0) fail(operationId, 'no 2xx answer');
  return { success: success.sort((a, b) => a.status - b.status), pages };
}

function deprecationOf(operation: JsonObject): ClientOperation['deprecation'] {
  const sunset = typeof operation['x-sunset'] === 'string' ? operation['x-sunset'] : undefined;
  if (operation['deprecated'] !== true && sunset === undefined) return undefined;
  const replacement = isObject(operation['x-replacement']) ? operation['x-replacement'] : {};
  const responses = isObject(operation['responses']) ? operation['responses'] : {};
  return {
    sunset,
    replacement: typeof replacement['operationId'] === 'string' ? replacement['operationId'] : undefined,
    replacementHref: typeof replacement['href'] === 'string' ? replacement['href'] : undefined,
    gone: '410' in responses,
  };
}

/** Every operation of the document, in the order of its paths and of methods within a path. */
export function clientOperations(document: JsonObject): ClientOperation[] {
  const operations: ClientOperation[] = [];
  for (const [path, rawItem] of Object.entries(object(document, document['paths']))) {
    const item = object(document, rawItem);
    for (const method of methodsInOrder)
      if (isObject(item[method])) operations.push(readOperation(document, path, method, item, item[method]));
  }
  const names = operations.flatMap((operation) => [
    operation.operationId,
    ...(operation.pages ? [pagesMethodName(operation)] : []),
  ]);
  const repeated = names.find((name, index) => names.indexOf(name) !== index);
  if (repeated !== undefined) throw new Error(`openapi: two client methods would be named ${repeated}`);
  return operations;
}

/** The name of the method that walks an operation's pages. */
export function pagesMethodName(operation: ClientOperation): string {
  return `${operation.operationId}Pages`;
}

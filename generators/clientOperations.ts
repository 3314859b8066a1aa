// What the TypeScript client's methods are, read from an OpenAPI document: one per operationId, its
// signature from where the operation puts its parts (path parameters in path order, the body, the query,
// the call's options), its retries from its method and whether it declares Idempotency-Key, its pages from
// a declared Link on an array answer, its deprecation from `deprecated` and `x-sunset`; every header
// parameter is sent (a required one in options.headers, an optional one as its camelCase option); bodies go
// and come in the media types the client's codecs speak (clients/typescript/src/mediaTypes.ts), each 2xx with
// its declared headers. A part the client cannot send or read as the contract says (a media type without a
// codec, a cookie, a header that is not one scalar, a query style other than form) fails generation, naming
// it, rather than making a method that drops it.
import { codecOf, type Codec } from '../clients/typescript/src/mediaTypes.js';
import { isObject, type Json, type JsonObject } from '../lib/openapi/dereference.js';

const methodsInOrder = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const idempotencyKeyHeader = 'idempotency-key';
const identifier = /^[A-Za-z_$][\w$]*$/;

export interface ClientOperation {
  operationId: string;
  method: Uppercase<(typeof methodsInOrder)[number]>;
  path: string;
  summary: string;
  pathParameters: string[];
  query: { names: string[]; required: boolean } | undefined;
  /** Its request body: the media types it may be sent as (several: the caller picks one, contentType), one codec. */
  body: { required: boolean; mediaTypes: string[]; codec: Codec } | undefined;
  /** The Accept it sends: its 2xx answers' media types, then its errors' others (else JSON) at q=0.1 (acceptOf). */
  accept: string | undefined;
  idempotencyKey: boolean;
  /** The required header parameters other than Idempotency-Key: the caller gives them (options.headers). */
  headers: string[];
  /** The optional header parameters other than Idempotency-Key: each an option of the call, named in camelCase. */
  optionalHeaders: { header: string; option: string }[];
  /** Whether it declares a 304: an answer to `If-None-Match`, which the call rejects with as `not_modified`. */
  notModified: boolean;
  /** Each 2xx status: its body's media types (none without a body), its schema's name (if a $ref), its headers. */
  success: {
    status: number;
    mediaTypes: string[];
    schemaName: string | undefined;
    headers: ResponseHeader[];
  }[];
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

/** A declared response header: its value's type, read from its schema. */
export interface ResponseHeader {
  name: string;
  type: 'string' | 'number' | 'boolean';
  required: boolean;
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

/** Options every call has (operationSpec.ts's CallOptions, KeyedCallOptions), which no header may take. */
const callOptions = new Set(['signal', 'idempotencyKey', 'headers', 'onHeaders', 'contentType']);

/** The option a header parameter is: its name in camelCase (If-None-Match is ifNoneMatch). */
function optionName(operationId: string, header: string): string {
  const option = header
    .toLowerCase()
    .split('-')
    .filter((part) => part !== '')
    .map((part, index) => (index === 0 ? part : `${part.charAt(0).toUpperCase()}${part.slice(1)}`))
    .join('');
  if (!identifier.test(option) || callOptions.has(option))
    fail(operationId, `header parameter ${header} would be the option ${option}, which is not free`);
  return option;
}

/** A header the client can send as the contract says: a schema of one string, number, integer or boolean. */
function scalarHeader(document: JsonObject, parameter: JsonObject): boolean {
  if (parameter['content'] !== undefined) return false;
  const schema = object(document, parameter['schema']);
  const type = schema['type'];
  const scalar = (name: unknown) => ['string', 'number', 'integer', 'boolean'].includes(String(name));
  if (type === undefined)
    return (
      Array.isArray(schema['enum']) &&
      schema['enum'].every((value) => ['string', 'number', 'boolean'].includes(typeof value))
    );
  return Array.isArray(type) ? type.length > 0 && type.every(scalar) : scalar(type);
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
  const optionalHeaders: ClientOperation['optionalHeaders'] = [];
  for (const parameter of parameters.filter(({ in: place }) => place === 'header' || place === 'cookie')) {
    const name = String(parameter['name']);
    const what = `${parameter['required'] === true ? 'required' : 'optional'} ${String(parameter['in'])} ${name}`;
    if (parameter['in'] !== 'header' || !identifierFree(name)) fail(operationId, what);
    if (!scalarHeader(document, parameter))
      fail(operationId, `${what}: not one scalar value (string, number, boolean)`);
    if (name.toLowerCase() === idempotencyKeyHeader) idempotencyKey = true;
    else if (parameter['required'] === true) headers.push(name);
    else optionalHeaders.push({ header: name, option: optionName(operationId, name) });
  }
  const options = optionalHeaders.map(({ option }) => option);
  const clash = options.find((option, index) => options.indexOf(option) !== index);
  if (clash !== undefined) fail(operationId, `two header parameters would be the option ${clash}`);
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
    optionalHeaders,
    notModified: isObject(operation['responses']) && '304' in operation['responses'],
    ...successOf(document, operationId, method, operation),
    deprecation: deprecationOf(operation),
  };
}

function bodyOf(document: JsonObject, operationId: string, operation: JsonObject): ClientOperation['body'] {
  if (operation['requestBody'] === undefined) return undefined;
  const body = object(document, operation['requestBody']);
  const mediaTypes = mediaTypesOf(operationId, 'request body', object(document, body['content']));
  const [first] = mediaTypes;
  if (first === undefined) fail(operationId, 'a request body without content');
  const range = mediaTypes.find((type) => type.includes('*'));
  if (range !== undefined)
    fail(operationId, `a request body in ${range}, a range the client cannot name as its Content-Type`);
  const codec = codecOf(first) ?? 'json';
  if (mediaTypes.some((type) => codecOf(type) !== codec))
    fail(operationId, `a request body in ${mediaTypes.join(', ')}, which the client would send in different ways`);
  return { required: body['required'] === true, mediaTypes, codec };
}

/** The media types of a content map; one the client has no codec for (mediaTypes.ts) fails, named. */
function mediaTypesOf(operationId: string, what: string, content: JsonObject): string[] {
  const types = Object.keys(content);
  const unknown = types.find((type) => codecOf(type) === undefined);
  if (unknown !== undefined)
    fail(
      operationId,
      `a ${what} in ${unknown} (the client speaks JSON and +json, application/octet-stream, application/pdf, image/*, audio/* and video/* as bytes, text/plain)`,
    );
  return types;
}

/** A response header's value type: its schema's, when one scalar (an enum of strings is a string). */
function headerOf(document: JsonObject, operationId: string, status: string, name: string, raw: Json): ResponseHeader {
  const header = object(document, raw);
  const schema = object(document, header['schema']);
  const type = schema['type'] ?? (Array.isArray(schema['enum']) ? 'string' : undefined);
  const types: Record<string, ResponseHeader['type']> = {
    string: 'string',
    number: 'number',
    integer: 'number',
    boolean: 'boolean',
  };
  const read = header['content'] === undefined && typeof type === 'string' ? types[type] : undefined;
  if (read === undefined)
    fail(operationId, `the ${status} answer's header ${name}: not one scalar value (string, number, boolean)`);
  return { name, type: read, required: header['required'] === true };
}

/** The media type of the service's Error object, which the client reads any error answer as (errors.ts). */
const errorObjectMediaType = 'application/json';

/**
 * What Accept lists: the 2xx media types in the contract's order, then the errors' others as less wanted.
 * An operation whose errors declare no media type is still answered with the Error object, in JSON, on a
 * refusal the contract leaves out (401, 413, 503...): an Accept of its photo's `image/png` alone would call
 * that answer unacceptable, so JSON joins at the errors' q. q=0.1, not higher: a server that negotiates must
 * pick the declared success type first; any q above 0 makes the Error object acceptable. An operation that
 * declares no body at all sends no Accept (fetch's `*\/*` takes the Error object).
 */
function acceptOf(
  document: JsonObject,
  operationId: string,
  operation: JsonObject,
  success: string[],
): string | undefined {
  const declared = new Set<string>();
  for (const [key, raw] of Object.entries(object(document, operation['responses'])))
    if (!/^[23]/.test(key))
      for (const type of mediaTypesOf(operationId, `${key} answer`, object(document, object(document, raw)['content'])))
        declared.add(type);
  if (declared.size === 0 && success.length > 0) declared.add(errorObjectMediaType);
  const others = [...declared].filter((type) => !success.includes(type));
  const accept = [...new Set(success), ...others.map((type) => `${type};q=0.1`)];
  return accept.length === 0 ? undefined : accept.join(', ');
}

function successOf(
  document: JsonObject,
  operationId: string,
  method: string,
  operation: JsonObject,
): Pick<ClientOperation, 'success' | 'pages' | 'accept'> {
  const success: ClientOperation['success'] = [];
  let pages = false;
  for (const [key, raw] of Object.entries(object(document, operation['responses']))) {
    if (!/^2\d\d$/.test(key)) {
      if (/^2/i.test(key)) fail(operationId, `the status range ${key}`);
      continue;
    }
    const response = object(document, raw);
    const content = object(document, response['content']);
    const mediaTypes = mediaTypesOf(operationId, `${key} answer`, content);
    const schemas = mediaTypes.map((type) => object(document, content[type])['schema']);
    const headers = Object.entries(object(document, response['headers'])).map(([name, header]) =>
      headerOf(document, operationId, key, name, header),
    );
    success.push({ status: Number(key), mediaTypes, schemaName: schemaNameOf(schemas[0]), headers });
    const declaresLink = headers.some(({ name }) => name.toLowerCase() === 'link');
    if (method === 'get' && declaresLink && schemas.length === 1 && object(document, schemas[0])['type'] === 'array')
      pages = true;
  }
  if (success.length === 0) fail(operationId, 'no 2xx answer');
  success.sort((a, b) => a.status - b.status);
  const accept = acceptOf(
    document,
    operationId,
    operation,
    success.flatMap(({ mediaTypes }) => mediaTypes),
  );
  return { success, pages, accept };
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

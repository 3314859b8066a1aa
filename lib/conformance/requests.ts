import fc from 'fast-check';
import { bytesWithin, meetsFormat, objectViolations, scalarViolations, valid } from './arbitraries.js';
import type { TestRequest } from './checks.js';
import { clientIdOf, isSafe } from './resources.js';
import type { Operation, Parameter, RequestBody, Schema } from './spec.js';

/** A generated request and the statuses the contract allows for it. */
export interface Case {
  request: TestRequest;
  expect: number[];
}

export interface GeneratorContext {
  key: string;
  bodyLimit: number;
}

const tokenChars = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/'.split(''));

/** Authorization headers that carry the key: the scheme name is case-insensitive, spaces may repeat. */
function validAuthorization(key: string): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR'), fc.integer({ min: 1, max: 3 }))
    .map(([scheme, spaces]) => `${scheme}${' '.repeat(spaces)}${key}`);
}

/** Headers that must be refused with 401; undefined means no Authorization header at all. */
function invalidAuthorization(key: string): fc.Arbitrary<string | undefined> {
  const otherKey = fc
    .array(tokenChars, { minLength: 20, maxLength: 60 })
    .map((chars) => chars.join(''))
    .filter((other) => other !== key);
  return fc.oneof(
    fc.constant(undefined),
    fc.constant(''),
    fc.constant('Bearer'),
    fc.constant('Bearer '),
    otherKey.map((other) => `Bearer ${other}`),
    fc.constant(`Bearer ${key}x`),
    fc.constant(`Bearer ${key.slice(0, -1)}`),
    fc.constant(`Basic ${Buffer.from(`user:${key}`).toString('base64')}`),
    fc.constant(`Token ${key}`),
    fc.constant(key),
    fc.constant(`Bearer ${key.slice(0, 5)} ${key.slice(5)}`),
  );
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const textOf = (value: unknown) =>
  typeof value === 'string'
    ? value
    : typeof value === 'object' && value !== null
      ? JSON.stringify(value)
      : String(value);

/**
 * Whether the server may read this text as a valid value of the parameter (so it is no violation): every
 * keyword of a string's schema counts, its `format` too (text of a uuid's length that is no uuid is a violation).
 */
export function textMightBeValid(schema: Schema, text: string): boolean {
  if (Array.isArray(schema['enum'])) return (schema['enum'] as unknown[]).includes(text);
  if (schema['type'] === 'integer') {
    if (!/^\s*[+-]?[0-9]+(\.0*)?\s*$/.test(text)) return false;
    const value = Number(text);
    return value >= Number(schema['minimum'] ?? -Infinity) && value <= Number(schema['maximum'] ?? Infinity);
  }
  if (schema['type'] === 'string') {
    const pattern = typeof schema['pattern'] === 'string' ? new RegExp(schema['pattern'], 'u') : undefined;
    const length = [...text].length;
    return (
      length >= Number(schema['minLength'] ?? 0) &&
      length <= Number(schema['maxLength'] ?? Infinity) &&
      (!pattern || pattern.test(text)) &&
      (typeof schema['format'] !== 'string' || meetsFormat(schema, text))
    );
  }
  return true;
}

/** A parameter's violations as text, the only form a path or query value has. */
function parameterViolations(parameter: Parameter): Array<{ rule: string; values: fc.Arbitrary<string> }> {
  const violations = scalarViolations(parameter.schema)
    .filter((violation) => !(violation.rule === 'type' && parameter.schema['type'] === 'string'))
    .map((violation) => ({
      rule: violation.rule,
      values: violation.values.map(textOf).filter((text) => !textMightBeValid(parameter.schema, text)),
    }));
  if (parameter.schema['type'] === 'integer') {
    // Text that a lenient number parser would take for an integer.
    violations.push({
      rule: 'integer syntax',
      values: fc.constantFrom('1.5', '0x10', '1e3', ' 1', '1 ', '1_000', '١', 'Infinity', 'NaN', ''),
    });
  }
  // An empty or dot segment is no value but another path: /pets/ is a 404,
  // and URL resolution turns /pets/. into /pets/.
  const notAValue = (text: string) => text === '' || text === '.' || text === '..';
  return parameter.in === 'path'
    ? violations.map((violation) => ({ ...violation, values: violation.values.filter((text) => !notAValue(text)) }))
    : violations;
}

interface Parts {
  pathParams: Record<string, string>;
  query: Array<[string, string]>;
  body?: unknown;
  authorization: string;
  contentType: string;
  /** Declared header parameters (only the invalid generator sets one). */
  headers?: Record<string, string>;
}

/** Spellings of the body's media type a server must take alike: parameters and case. Bytes have no charset. */
function contentTypes(body: RequestBody | undefined): fc.Arbitrary<string> {
  const mediaType = body?.mediaType ?? 'application/json';
  const spellings =
    body?.kind === 'bytes'
      ? [mediaType]
      : mediaType === 'application/json'
        ? ['application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON']
        : [mediaType, `${mediaType}; charset=utf-8`];
  return fc.constantFrom(...spellings);
}

/** The largest body the operation takes: its x-body-limit-bytes, else the server's. */
const limitOf = (body: RequestBody, context: Pick<GeneratorContext, 'bodyLimit'>): number =>
  body.limitBytes ?? context.bodyLimit;

/**
 * Valid bodies, drawn as the body's media type entry says: values of its schema, or bytes within its limit
 * (its x-body-limit-bytes, else the server's `bodyLimit`). Every tool that draws a request body draws it here.
 */
export function bodyValues(body: RequestBody, context: Pick<GeneratorContext, 'bodyLimit'>): fc.Arbitrary<unknown> {
  return body.kind === 'bytes' ? bytesWithin(limitOf(body, context)) : valid(body.schema);
}

/** A drawn body as it goes on the wire: bytes as they are, no JSON text, no decoding; any other value as JSON text. */
export const onTheWire = (body: RequestBody, value: unknown): string | Uint8Array =>
  body.kind === 'bytes' ? (value as Uint8Array) : JSON.stringify(value);

/** Everything of a valid request, as separate parts that the invalid generator breaks one at a time. */
function validParts(operation: Operation, context: GeneratorContext): fc.Arbitrary<Parts> {
  const pathParameters = operation.parameters.filter((parameter) => parameter.in === 'path');
  // Every query parameter, the page cursor included: its schema admits only
  // cursors the service serves, so a generated one must be answered 200.
  const queryParameters = operation.parameters.filter((parameter) => parameter.in === 'query');
  const pathParams = fc.record(
    Object.fromEntries(pathParameters.map((parameter) => [parameter.name, valid(parameter.schema).map(textOf)])),
  );
  const query = fc
    .record(
      Object.fromEntries(
        queryParameters.map((parameter) => [
          parameter.name,
          // An array parameter is sent repeated, one value per entry.
          valid(parameter.schema).map((value) => (Array.isArray(value) ? value.map(textOf) : [textOf(value)])),
        ]),
      ),
      {
        requiredKeys: queryParameters.filter((parameter) => parameter.required).map((parameter) => parameter.name),
      },
    )
    .map((values) =>
      (Object.entries(values) as Array<[string, string[]]>).flatMap(([name, texts]) =>
        texts.map((text) => [name, text] as [string, string]),
      ),
    );
  return fc.record({
    pathParams,
    query,
    ...(operation.body ? { body: bodyValues(operation.body, context) } : {}),
    authorization: validAuthorization(context.key),
    contentType: contentTypes(operation.body),
  });
}

function toRequest(operation: Operation, intent: string, parts: Parts): TestRequest {
  const headers: Record<string, string> = { ...parts.headers, authorization: parts.authorization };
  const request: TestRequest = {
    operationId: operation.operationId,
    intent,
    pathParams: parts.pathParams,
    query: parts.query,
    headers,
  };
  if (operation.body && parts.body !== undefined) {
    headers['content-type'] = parts.contentType;
    request.body = onTheWire(operation.body, parts.body);
  }
  return request;
}

/**
 * The statuses a schema-valid request may get: success; 404 when its path names a resource that may not exist; a
 * declared 409 or 412, which the store's state may give a valid request (a conflict, a precondition it sent); and,
 * for one with a body, a declared 422 (RFC 9110 15.5.21: content the schema admits but the server cannot act on,
 * such as an id in the body naming nothing). The stateful model expects each exactly.
 */
function successStatuses(operation: Operation): number[] {
  const statuses = [...operation.responses.keys()].filter((status) => status.startsWith('2')).map(Number);
  const namesResource = operation.parameters.some((parameter) => parameter.in === 'path');
  const refusedByState = [409, 412].filter((status) => operation.responses.has(String(status)));
  const unprocessable = operation.body !== undefined && operation.responses.has('422') ? [422] : [];
  return [
    ...statuses,
    ...(namesResource && operation.responses.has('404') ? [404] : []),
    ...refusedByState,
    ...unprocessable,
  ];
}

export function validCases(operation: Operation, context: GeneratorContext): fc.Arbitrary<Case> {
  const expect = successStatuses(operation);
  return validParts(operation, context).map((parts) => ({ request: toRequest(operation, 'valid', parts), expect }));
}

/** A header value HTTP carries exactly: Latin-1 without controls, no white space at either end. */
const sendableHeader = /^([!-~\u0080-\u00ff]([\t -~\u0080-\u00ff]*[!-~\u0080-\u00ff])?)?$/;

/** Requests that break exactly one rule of the contract, each rule in turn. */
export function invalidCases(operation: Operation, context: GeneratorContext): fc.Arbitrary<Case> {
  const cases: Array<fc.Arbitrary<Case>> = [];
  const base = validParts(operation, context);
  const make = (
    intent: string,
    expect: number[],
    parts: fc.Arbitrary<Parts>,
    finish: (request: TestRequest) => TestRequest = (request) => request,
  ) => cases.push(parts.map((value) => ({ request: finish(toRequest(operation, intent, value)), expect })));

  for (const declared of operation.parameters) {
    if (declared.in === 'header') {
      // Only what HTTP can carry as sent: no leading or trailing white space
      // (parsers strip it), no character beyond Latin-1 (clients refuse it).
      for (const violation of parameterViolations(declared)) {
        make(
          `header ${declared.name} ${violation.rule}`,
          [400],
          fc
            .tuple(
              base,
              violation.values.filter((text) => sendableHeader.test(text)),
            )
            .map(([parts, text]) => ({ ...parts, headers: { [declared.name.toLowerCase()]: text } })),
        );
      }
      continue;
    }
    // An array parameter is broken one repeated value at a time, or by one value too many.
    const items = declared.schema['type'] === 'array' ? (declared.schema['items'] as Schema) : undefined;
    const parameter = items ? { ...declared, schema: items } : declared;
    const maxItems = declared.schema['maxItems'];
    if (items && declared.in === 'query' && typeof maxItems === 'number') {
      make(
        `query ${declared.name} maxItems`,
        [400],
        fc
          .tuple(base, fc.array(valid(items), { minLength: maxItems + 1, maxLength: maxItems + 1 }))
          .map(([parts, values]) => ({
            ...parts,
            query: [
              ...parts.query.filter(([name]) => name !== declared.name),
              ...values.map((value) => [declared.name, textOf(value)] as [string, string]),
            ],
          })),
      );
    }
    for (const violation of parameterViolations(parameter)) {
      const intent = `${parameter.in} ${parameter.name} ${violation.rule}`;
      if (parameter.in === 'path') {
        make(
          intent,
          [400],
          fc
            .tuple(base, violation.values)
            .map(([parts, text]) => ({ ...parts, pathParams: { ...parts.pathParams, [parameter.name]: text } })),
        );
      } else {
        make(
          intent,
          [400],
          fc.tuple(base, violation.values).map(([parts, text]) => ({
            ...parts,
            query: [
              ...parts.query.filter(([name]) => name !== parameter.name),
              [parameter.name, text] as [string, string],
            ],
          })),
        );
      }
    }
    if (parameter.in === 'query' && !items) {
      // A repeated parameter is an array, never the scalar the schema declares.
      make(
        `query ${parameter.name} repeated`,
        [400],
        fc.tuple(base, valid(parameter.schema), valid(parameter.schema)).map(([parts, first, second]) => ({
          ...parts,
          query: [
            ...parts.query.filter(([name]) => name !== parameter.name),
            [parameter.name, textOf(first)] as [string, string],
            [parameter.name, textOf(second)] as [string, string],
          ],
        })),
      );
    }
  }

  if (!operation.body && !['GET', 'HEAD'].includes(operation.method.toUpperCase())) {
    // Requests are closed: content where the operation declares none is refused (400), whatever its type, not
    // read as something else. Not on GET and HEAD, whose content has no meaning (RFC 9110 9.3.1, 9.3.2) and
    // which fetch will not send with any.
    const contents = fc.constantFrom(
      { type: 'application/json', text: '{}' },
      { type: 'application/json', text: '{"id":1}' },
      { type: 'text/plain', text: 'x' },
    );
    cases.push(
      fc.tuple(base, contents).map(([parts, content]) => {
        const request = toRequest(operation, `a body it does not declare (${content.type})`, parts);
        return {
          request: { ...request, headers: { ...request.headers, 'content-type': content.type }, body: content.text },
          expect: [400],
        };
      }),
    );
  }

  if (operation.body) {
    // Any bytes are a bytes body's value: only a JSON body has a schema to break, text that is no JSON, or none.
    const json = operation.body.kind === 'json';
    for (const violation of json ? objectViolations(operation.body.schema) : []) {
      make(
        `body ${violation.rule}`,
        [400],
        fc.tuple(base, violation.values).map(([parts, body]) => ({ ...parts, body })),
      );
    }
    const mediaTypes = fc.constantFrom(
      'text/plain',
      'application/xml',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      'text/json',
    );
    make(
      'content type',
      [415],
      fc.tuple(base, mediaTypes).map(([parts, contentType]) => ({ ...parts, contentType })),
    );
    // Some content, so that what is missing is the type alone (bytes may be drawn empty).
    const someContent = base.filter((parts) => !(parts.body instanceof Uint8Array && parts.body.length === 0));
    make('no content type', [415], someContent, (request) => ({
      ...request,
      headers: { authorization: request.headers['authorization']! },
      // fetch adds no Content-Type of its own to bytes; to text it would (text/plain), so text goes as bytes.
      body: request.body instanceof Uint8Array ? request.body : { bytes: String(request.body) },
    }));
    if (json) {
      cases.push(
        fc
          .tuple(base, fc.nat(), fc.constantFrom('', '{', '}', ',', '"', 'x', '\u0000'))
          .map(([parts, at, junk]) => {
            const request = toRequest(operation, 'malformed JSON', parts);
            const text = String(request.body);
            const cutAt = text.length > 1 ? 1 + (at % (text.length - 1)) : 0;
            return { request: { ...request, body: text.slice(0, cutAt) + junk }, expect: [400] };
          })
          .filter(({ request }) => !parses(String(request.body))),
      );
      make('empty body', [400], base, (request) => ({ ...request, body: '' }));
    }
    if (operation.body.required) {
      make('no body', [400], base, (request) => {
        const { body: _body, ...rest } = request;
        return { ...rest, headers: { authorization: request.headers['authorization']! } };
      });
    }
    const limit = limitOf(operation.body, context);
    cases.push(
      fc.tuple(base, fc.integer({ min: 1, max: 4096 })).map(([parts, extra]) => {
        const request = toRequest(operation, 'oversize body', parts);
        if (request.body instanceof Uint8Array) {
          const over = new Uint8Array(limit + extra).fill(0xff);
          over.set(request.body);
          return { request: { ...request, body: over }, expect: [413] };
        }
        const padding = ' '.repeat(limit + extra - String(request.body).length);
        return { request: { ...request, body: `${String(request.body)}${padding}` }, expect: [413] };
      }),
    );
  }

  if (operation.secured) {
    // Authentication comes first: a request without a valid key is 401 whatever else it holds.
    cases.push(
      fc
        .tuple(
          fc.oneof(
            ...cases.map((arbitrary) => arbitrary.map((item) => item.request)),
            validCases(operation, context).map((item) => item.request),
          ),
          invalidAuthorization(context.key),
        )
        .map(([request, authorization]) => {
          const headers = { ...request.headers };
          delete headers['authorization'];
          if (authorization !== undefined) headers['authorization'] = authorization;
          return { request: { ...request, intent: `auth (${request.intent})`, headers }, expect: [401] };
        }),
    );
  }
  return fc.oneof(...cases);
}

/** Whether the text is a value of the schema as a valid request spells it: an integer in plain digits. */
function isCanonical(schema: Schema, text: string): boolean {
  if (schema['type'] === 'integer' && !/^-?(0|[1-9][0-9]*)$/.test(text)) return false;
  return textMightBeValid(schema, text);
}

/**
 * The rule of every tool that sends generated requests to a deployment (npm
 * run verify, the suite over HTTP): a request with an unsafe method (RFC 9110
 * 9.2.1; `isSafe`) that names a resource in its path names one this run
 * made, whatever the request was generated to test. `own` gives such an id
 * for the parameter, or undefined when the run has none (then the request is
 * not sent: undefined).
 *
 * Invalid requests are held to the same rule: a 401 or 400 case is harmless
 * only while the deployment refuses it first, and a deployment whose
 * authentication or validation is broken is what such a run looks for. So
 * a value the parameter's schema takes is always replaced by an own id; one
 * it refuses is sent only when it holds no digit (`abc`), and otherwise the
 * request is not sent, since a lenient parser could read `1e3`, ` 1`,
 * `0x10` or an out-of-range number as an id someone else's resource has.
 * Safe methods are sent as generated.
 */
export function aimAtOwn(
  operation: Operation,
  request: TestRequest,
  own: (parameter: Parameter) => string | undefined,
): TestRequest | undefined {
  if (isSafe(operation)) return request;
  const pathParams = { ...request.pathParams };
  for (const parameter of operation.parameters.filter((declared) => declared.in === 'path')) {
    const text = pathParams[parameter.name] ?? '';
    if (!isCanonical(parameter.schema, text)) {
      if (/\p{Nd}/u.test(text)) return undefined;
      continue;
    }
    const id = own(parameter);
    if (id === undefined) return undefined;
    pathParams[parameter.name] = id;
  }
  return { ...request, pathParams };
}

/**
 * Whether the request breaks that rule: an unsafe method, and a path value
 * that could name a resource (an id-shaped value, or any value with a digit)
 * the run did not make. The last check before a request leaves.
 */
export function namesForeignResource(
  operation: Operation,
  request: TestRequest,
  isOwn: (parameter: Parameter, value: string) => boolean,
): boolean {
  if (isSafe(operation)) return false;
  // A create-only PUT (If-None-Match: *) changes nothing that exists: the id it names is one the run drew.
  const createOnly = request.headers['if-none-match']?.trim() === '*' ? clientIdOf(operation)?.name : undefined;
  const path = operation.parameters.filter((declared) => declared.in === 'path' && declared.name !== createOnly);
  // A value its schema refuses and that holds no digit (aimAtOwn sends it as generated) makes the request a
  // 400 before any resource is looked up: the other values name nothing (an adoption under an invalid owner).
  const refused = (parameter: Parameter) => {
    const text = request.pathParams[parameter.name] ?? '';
    return !isCanonical(parameter.schema, text) && !/\p{Nd}/u.test(text);
  };
  if (path.some(refused)) return false;
  return path.some((parameter) => {
    const text = request.pathParams[parameter.name] ?? '';
    if (isCanonical(parameter.schema, text)) return !isOwn(parameter, text);
    return /\p{Nd}/u.test(text);
  });
}

// The catalogue of OpenAPI 3.1 and JSON Schema 2020-12 constructs: what each is, where it appears (its
// detector), a minimal example spec that has it, and what each machine does with it. `npm run generate`
// refuses a spec in which it finds a construct some machine refuses (lib/constructs/refusals.ts) and writes
// the matrix of docs/constructs.md from this list. Supporting a construct in a machine is its verdict here
// turned to `supported`, with the test that drives the example through that machine.
import { isObject, type JsonObject } from '../openapi/dereference.js';
import * as detect from './detectors.js';
import {
  bodyExample,
  jsonContent,
  ok,
  operationExample,
  parameterExample,
  schemaExample,
  stringSchema,
} from './examples.js';
import { machineIds, machineTestFile, type MachineId, type Verdict } from './machines.js';

export interface Construct {
  id: string;
  group: string;
  title: string;
  detect: detect.Detector;
  /** The members of a minimal spec that has the construct (merged into lib/constructs/examples.ts's base). */
  example: JsonObject;
  verdicts: Record<MachineId, Verdict>;
}

/** Every machine drives it, each in its own test file. */
const everywhere = (): Record<MachineId, Verdict> =>
  Object.fromEntries(machineIds.map((machine) => [machine, { supported: machineTestFile(machine) }])) as Record<
    MachineId,
    Verdict
  >;

/** No machine is proven to handle it; `supportedBy` names the machines that are. */
const refused = (reason: string, supportedBy: MachineId[] = []): Record<MachineId, Verdict> =>
  Object.fromEntries(
    machineIds.map((machine) => [
      machine,
      supportedBy.includes(machine) ? { supported: machineTestFile(machine) } : { refused: reason },
    ]),
  ) as Record<MachineId, Verdict>;

/**
 * Every machine drives it in one suite that runs them all on a spec that has it: the worked examples
 * (npm run test:system -- new-operation) add operations answering it, then run generate, the gate, the
 * client, the conformance suite and verify on the result.
 */
const workedExamples = 'test/newOperation/newOperation.test.ts';
const everyMachineIn = (file: string): Record<MachineId, Verdict> =>
  Object.fromEntries(machineIds.map((machine) => [machine, { supported: file }])) as Record<MachineId, Verdict>;

const thing: JsonObject = { type: 'object', properties: { name: stringSchema } };
/** Either a Named (by $ref) or an object requiring `title`: two objects, each requiring its own property. */
const namedOrTitled = (): JsonObject => ({
  anyOf: [
    { $ref: '#/components/schemas/Named' },
    { type: 'object', required: ['title'], properties: { title: stringSchema } },
  ],
});
const closedThing: JsonObject = { ...thing, additionalProperties: false };
const apiKeyIn = (where: string): JsonObject => ({
  components: { securitySchemes: { key: { type: 'apiKey', in: where, name: 'key' } } },
  security: [{ key: [] }],
  ...operationExample({}),
});

const mediaTypes: Construct[] = [
  {
    id: 'media-json',
    group: 'Media types',
    title: '`application/json` request and response bodies',
    detect: detect.mediaTypeWhere(detect.isJson),
    example: operationExample(
      {
        requestBody: { required: true, content: { 'application/json': { schema: thing } } },
        responses: { '200': { description: 'OK', ...jsonContent(thing) } },
      },
      'post',
    ),
    verdicts: everywhere(),
  },
  {
    id: 'media-json-suffix',
    group: 'Media types',
    title: 'a `+json` media type (`application/merge-patch+json`, `application/problem+json`)',
    detect: detect.mediaTypeWhere(detect.isJsonSuffix),
    example: operationExample(
      {
        requestBody: { required: true, content: { 'application/merge-patch+json': { schema: thing } } },
        responses: { '200': { description: 'OK', content: { 'application/vnd.example+json': { schema: thing } } } },
      },
      'patch',
    ),
    verdicts: everywhere(),
  },
  {
    id: 'media-bytes',
    group: 'Media types',
    title: 'bytes: `application/octet-stream`, `image/*`, `audio/*`, `video/*`, `application/pdf`',
    detect: detect.mediaTypeWhere(detect.isBytes),
    // A photo put and read back: bytes in, bytes out, within a size the spec declares.
    example: operationExample(
      {
        requestBody: {
          required: true,
          'x-body-limit-bytes': 1024,
          content: { 'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } } },
        },
        responses: {
          '200': {
            description: 'OK',
            content: { 'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } } },
          },
        },
      },
      'put',
    ),
    verdicts: everywhere(),
  },
  {
    id: 'media-text',
    group: 'Media types',
    title: '`text/*` bodies',
    detect: detect.mediaTypeWhere(detect.isText),
    example: bodyExample({ 'text/plain': { schema: stringSchema } }),
    verdicts: refused('text bodies are neither parsed nor answered; only JSON is'),
  },
  {
    id: 'media-multipart',
    group: 'Media types',
    title: '`multipart/form-data` (and any `multipart/*`) with its `encoding`',
    detect: detect.mediaTypeWhere(detect.isMultipart),
    example: bodyExample({ 'multipart/form-data': { schema: thing } }),
    verdicts: refused('multipart bodies are not parsed; only JSON is'),
  },
  {
    id: 'media-form',
    group: 'Media types',
    title: '`application/x-www-form-urlencoded` bodies',
    detect: detect.mediaTypeWhere(detect.isForm),
    example: bodyExample({ 'application/x-www-form-urlencoded': { schema: thing } }),
    verdicts: refused('form bodies are not parsed; only JSON is'),
  },
  {
    id: 'media-other',
    group: 'Media types',
    title: 'any other media type (`application/xml`, `*/*`, ...)',
    detect: detect.mediaTypeWhere(
      (type) =>
        ![detect.isJson, detect.isJsonSuffix, detect.isBytes, detect.isText, detect.isMultipart, detect.isForm].some(
          (known) => known(type),
        ),
    ),
    example: bodyExample({ 'application/xml': { schema: thing } }),
    verdicts: refused('no machine knows how to parse, validate or send it'),
  },
  {
    id: 'media-several',
    group: 'Media types',
    title: 'several media types on one body or response',
    detect: detect.severalMediaTypes,
    example: bodyExample({ 'application/json': { schema: thing }, 'application/merge-patch+json': { schema: thing } }),
    verdicts: refused('each body and response is read as one media type; there is no negotiation'),
  },
  {
    id: 'negotiation-406',
    group: 'Media types',
    title: '`Accept` negotiation answered by 406',
    detect: detect.responseStatus((status) => status === '406'),
    example: operationExample({ responses: { '200': ok, '406': { description: 'Not acceptable' } } }),
    verdicts: refused('Accept is not negotiated: every answer is JSON'),
  },
  {
    id: 'schema-content-encoding',
    group: 'Media types',
    title: '`contentMediaType` / `contentEncoding` inside a schema',
    detect: detect.encodedContentInSchemas,
    example: schemaExample({ type: 'string', contentEncoding: 'base64' }),
    verdicts: refused('encoded content inside JSON is neither decoded nor generated'),
  },
];

const parameterRefusal = 'this serialization is neither parsed, sent, generated nor compared';
const styled = (
  id: string,
  title: string,
  keys: string[],
  parameter: JsonObject,
  verdicts?: Record<MachineId, Verdict>,
): Construct => ({
  id,
  group: 'Parameters',
  title,
  detect: detect.parameterStyle(...keys),
  example: parameterExample(parameter),
  verdicts: verdicts ?? refused(parameterRefusal),
});
const list = { type: 'array', items: stringSchema, maxItems: 5 };

const parametersList: Construct[] = [
  styled(
    'param-path-simple',
    'path parameter, `simple` (the default)',
    ['path simple'],
    { name: 'id', in: 'path', required: true, schema: stringSchema },
    everywhere(),
  ),
  styled('param-path-simple-explode', 'path parameter, `simple` with `explode: true`', ['path simple explode'], {
    name: 'id',
    in: 'path',
    required: true,
    explode: true,
    schema: list,
  }),
  styled('param-path-label', 'path parameter, `label` style', ['path label', 'path label explode'], {
    name: 'id',
    in: 'path',
    required: true,
    style: 'label',
    schema: stringSchema,
  }),
  styled('param-path-matrix', 'path parameter, `matrix` style', ['path matrix', 'path matrix explode'], {
    name: 'id',
    in: 'path',
    required: true,
    style: 'matrix',
    schema: stringSchema,
  }),
  styled(
    'param-query-form',
    'query parameter, `form` exploded (the default; arrays as repeated names)',
    ['query form explode'],
    { name: 'tag', in: 'query', schema: list },
    everywhere(),
  ),
  styled(
    'param-query-form-no-explode',
    'query parameter, `form` with `explode: false` (comma-separated)',
    ['query form'],
    { name: 'tag', in: 'query', explode: false, schema: list },
  ),
  styled(
    'param-query-space-delimited',
    'query parameter, `spaceDelimited`',
    ['query spaceDelimited', 'query spaceDelimited explode'],
    { name: 'tag', in: 'query', style: 'spaceDelimited', explode: false, schema: list },
  ),
  styled(
    'param-query-pipe-delimited',
    'query parameter, `pipeDelimited`',
    ['query pipeDelimited', 'query pipeDelimited explode'],
    { name: 'tag', in: 'query', style: 'pipeDelimited', explode: false, schema: list },
  ),
  styled('param-query-deep-object', 'query parameter, `deepObject`', ['query deepObject', 'query deepObject explode'], {
    name: 'filter',
    in: 'query',
    style: 'deepObject',
    explode: true,
    schema: thing,
  }),
  styled(
    'param-header-simple',
    'header parameter, `simple` (the default)',
    ['header simple'],
    { name: 'X-Tag', in: 'header', schema: stringSchema },
    everywhere(),
  ),
  styled('param-header-simple-explode', 'header parameter, `simple` with `explode: true`', ['header simple explode'], {
    name: 'X-Tag',
    in: 'header',
    explode: true,
    schema: thing,
  }),
  {
    id: 'param-style-other',
    group: 'Parameters',
    title: 'a `style` the Specification does not allow where the parameter is',
    detect: detect.otherParameterStyle,
    example: parameterExample({ name: 'tag', in: 'query', style: 'matrix', schema: stringSchema }),
    verdicts: refused('OpenAPI defines no such serialization'),
  },
  {
    id: 'param-cookie',
    group: 'Parameters',
    title: 'cookie parameter (any style)',
    detect: detect.parameterWhere((parameter) => parameter['in'] === 'cookie'),
    example: parameterExample({ name: 'session', in: 'cookie', schema: stringSchema }),
    verdicts: refused('cookies are neither read, typed nor sent'),
  },
  {
    id: 'param-allow-reserved',
    group: 'Parameters',
    title: '`allowReserved: true`',
    detect: detect.parameterWhere((parameter) => parameter['allowReserved'] === true),
    example: parameterExample({ name: 'q', in: 'query', allowReserved: true, schema: stringSchema }),
    verdicts: refused('reserved characters are always percent-encoded'),
  },
  {
    id: 'param-content',
    group: 'Parameters',
    title: 'a parameter with `content` (a JSON-encoded value) instead of `schema`',
    detect: detect.parameterWhere((parameter) => 'content' in parameter),
    example: parameterExample({ name: 'filter', in: 'query', content: { 'application/json': { schema: thing } } }),
    verdicts: refused('parameter values are never decoded from a media type'),
  },
  {
    id: 'param-deprecated',
    group: 'Parameters',
    title: '`deprecated: true` on a parameter',
    detect: detect.parameterWhere((parameter) => parameter['deprecated'] === true),
    example: parameterExample({ name: 'old', in: 'query', deprecated: true, schema: stringSchema }),
    verdicts: refused('a deprecated parameter is neither announced nor reviewed'),
  },
];

const schemaRefusal = (what: string) => `${what} is not read by every generator and comparison`;
const keyword = (id: string, title: string, name: string, schema: JsonObject, reason: string): Construct => ({
  id,
  group: 'Schemas',
  title,
  detect: detect.schemaKeyword(name),
  example: schemaExample(schema),
  verdicts: refused(reason),
});

const schemasList: Construct[] = [
  {
    id: 'schema-type-array',
    group: 'Schemas',
    title: '`type` as an array (`[string, integer]`)',
    detect: detect.schemaWhere((schema) => Array.isArray(schema['type'])),
    example: schemaExample({ type: ['string', 'integer'] }),
    verdicts: refused(schemaRefusal('a type array')),
  },
  {
    id: 'schema-null',
    group: 'Schemas',
    title: '`null` as a value (`type: null`, `[string, null]`, `enum`/`const` with null)',
    detect: detect.schemaWhere(
      (schema) =>
        schema['type'] === 'null' ||
        (Array.isArray(schema['type']) && schema['type'].includes('null')) ||
        (Array.isArray(schema['enum']) && schema['enum'].includes(null)) ||
        ('const' in schema && schema['const'] === null),
    ),
    example: schemaExample({ type: ['string', 'null'] }),
    verdicts: refused('a NULL column answers 500 where the schema has no null; null is not generated'),
  },
  {
    id: 'schema-any-of',
    group: 'Schemas',
    title: '`anyOf` (of schemas, of `$ref`s, of objects that require different properties)',
    detect: detect.schemaKeyword('anyOf'),
    example: {
      ...operationExample(
        {
          requestBody: { required: true, ...jsonContent(namedOrTitled()) },
          responses: { '200': { description: 'OK', ...jsonContent(namedOrTitled()) } },
        },
        'post',
      ),
      components: {
        schemas: {
          Status: { type: 'string', enum: ['available', 'sold'] },
          Named: {
            type: 'object',
            required: ['name'],
            properties: {
              name: stringSchema,
              status: { anyOf: [{ $ref: '#/components/schemas/Status' }, { type: 'integer', minimum: 0 }] },
            },
          },
        },
      },
    },
    verdicts: everywhere(),
  },
  {
    id: 'schema-any-of-required-only',
    group: 'Schemas',
    title:
      '`anyOf` whose branch requires a property only the object beside it declares (`anyOf: [{required: [a]}, {required: [b]}]`)',
    detect: detect.schemaWhere(
      (schema) =>
        Array.isArray(schema['anyOf']) &&
        schema['anyOf'].some((branch) => {
          if (!isObject(branch) || !Array.isArray(branch['required'])) return false;
          const declared = isObject(branch['properties']) ? branch['properties'] : {};
          return branch['required'].some((name) => typeof name !== 'string' || !(name in declared));
        }),
    ),
    example: schemaExample({
      type: 'object',
      properties: { name: stringSchema, title: stringSchema },
      anyOf: [{ required: ['name'] }, { required: ['title'] }],
    }),
    verdicts: refused(
      'the validators (ajv, strict) refuse a branch that requires a property it does not declare; write each branch as a whole object, as in schema-any-of',
    ),
  },
  keyword('schema-one-of', '`oneOf`', 'oneOf', { oneOf: [stringSchema, { type: 'integer' }] }, schemaRefusal('oneOf')),
  keyword('schema-all-of', '`allOf`', 'allOf', { allOf: [thing, { required: ['name'] }] }, schemaRefusal('allOf')),
  keyword(
    'schema-discriminator',
    '`discriminator` (with `oneOf`/`anyOf`/`allOf`)',
    'discriminator',
    { oneOf: [thing], discriminator: { propertyName: 'kind' } },
    schemaRefusal('a discriminator'),
  ),
  keyword('schema-const', '`const`', 'const', { const: 'fixed' }, schemaRefusal('const')),
  {
    id: 'schema-ref-siblings',
    group: 'Schemas',
    title: '`$ref` with sibling keywords (both apply)',
    detect: detect.refSiblings,
    example: {
      ...schemaExample({ $ref: '#/components/schemas/Name', maxLength: 10 }),
      components: { schemas: { Name: stringSchema } },
    },
    verdicts: refused(
      'openapi-typescript types it as the target alone (`{$ref: Obj, required: [b]}` is `Obj`, `b` optional), so ' +
        'handlers and the client are typed apart from what ajv validates (the target and the keywords beside it)',
    ),
  },
  {
    id: 'schema-recursive',
    group: 'Schemas',
    title: 'a recursive schema (a tree)',
    detect: detect.recursiveSchemas,
    example: {
      ...schemaExample({ $ref: '#/components/schemas/Node' }),
      components: {
        schemas: { Node: { type: 'object', properties: { child: { $ref: '#/components/schemas/Node' } } } },
      },
    },
    verdicts: refused('values cannot be generated or compared for a schema that contains itself'),
  },
  {
    id: 'schema-closed-object',
    group: 'Schemas',
    title: '`additionalProperties: false` (a closed object)',
    detect: detect.schemaWhere((schema) => schema['additionalProperties'] === false),
    example: operationExample(
      {
        requestBody: { required: true, content: { 'application/json': { schema: closedThing } } },
        responses: { '200': { description: 'OK', ...jsonContent(closedThing) } },
      },
      'post',
    ),
    verdicts: everywhere(),
  },
  {
    id: 'schema-additional-properties',
    group: 'Schemas',
    title: '`additionalProperties` as a schema or `true` (a map)',
    detect: detect.schemaWhere(
      (schema) => 'additionalProperties' in schema && schema['additionalProperties'] !== false,
    ),
    example: schemaExample({ type: 'object', additionalProperties: stringSchema }),
    verdicts: refused(schemaRefusal('a map of additional properties')),
  },
  keyword(
    'schema-pattern-properties',
    '`patternProperties`',
    'patternProperties',
    { type: 'object', patternProperties: { '^x-': stringSchema } },
    schemaRefusal('patternProperties'),
  ),
  keyword(
    'schema-property-names',
    '`propertyNames`',
    'propertyNames',
    { type: 'object', propertyNames: { pattern: '^[a-z]+$' } },
    schemaRefusal('propertyNames'),
  ),
  keyword(
    'schema-read-only',
    '`readOnly`',
    'readOnly',
    { ...thing, properties: { id: { type: 'string', readOnly: true } } },
    'a readOnly property is still required in requests',
  ),
  keyword(
    'schema-write-only',
    '`writeOnly`',
    'writeOnly',
    { ...thing, properties: { secret: { type: 'string', writeOnly: true } } },
    'a writeOnly property is still expected in answers',
  ),
  keyword(
    'schema-default',
    '`default`',
    'default',
    { ...thing, properties: { size: { type: 'integer', default: 1 } } },
    'defaults are neither applied alike by every machine nor reviewed',
  ),
  keyword(
    'schema-deprecated',
    '`deprecated: true` on a property',
    'deprecated',
    { ...thing, properties: { old: { type: 'string', deprecated: true } } },
    'a deprecated property is neither announced nor reviewed',
  ),
  {
    id: 'schema-conditional',
    group: 'Schemas',
    title: '`if`/`then`/`else`, `not`, `dependentSchemas`, `unevaluated*`',
    detect: detect.schemaWhere((schema) =>
      ['if', 'not', 'dependentSchemas', 'dependentRequired', 'unevaluatedProperties', 'unevaluatedItems'].some(
        (name) => name in schema,
      ),
    ),
    example: schemaExample({ type: 'string', not: { const: 'x' } }),
    verdicts: refused(schemaRefusal('a conditional keyword')),
  },
];

const responsesList: Construct[] = [
  {
    id: 'response-created',
    group: 'Responses',
    title: '201 Created',
    detect: detect.responseStatus((status) => status === '201'),
    example: operationExample({ responses: { '201': { description: 'Created', ...jsonContent(thing) } } }, 'post'),
    verdicts: everywhere(),
  },
  {
    id: 'response-accepted',
    group: 'Responses',
    title: '202 Accepted',
    detect: detect.responseStatus((status) => status === '202'),
    example: operationExample({ responses: { '202': { description: 'Accepted' } } }, 'post'),
    verdicts: refused('202 is not told apart from other successes'),
  },
  {
    id: 'response-no-content',
    group: 'Responses',
    title: '204 No Content',
    detect: detect.responseStatus((status) => status === '204'),
    example: operationExample({ responses: { '204': { description: 'Done' } } }, 'delete'),
    verdicts: everyMachineIn(workedExamples),
  },
  {
    id: 'response-range',
    group: 'Responses',
    title: 'a status range (`2XX`, `4XX`)',
    detect: detect.responseStatus((status) => /^[1-5]XX$/i.test(status)),
    example: operationExample({ responses: { '2XX': ok } }),
    verdicts: refused('answers are matched to exact statuses only'),
  },
  {
    id: 'response-default',
    group: 'Responses',
    title: 'a `default` response',
    detect: detect.responseStatus((status) => status === 'default'),
    example: operationExample({ responses: { '200': ok, default: { description: 'Anything else' } } }),
    verdicts: refused('answers are matched to exact statuses only'),
  },
  {
    id: 'response-headers',
    group: 'Responses',
    title: 'declared response headers (`Location`, `ETag`, ...)',
    detect: detect.declaredResponseHeaders,
    example: operationExample(
      {
        responses: {
          '201': { description: 'Created', headers: { Location: { required: true, schema: stringSchema } } },
        },
      },
      'post',
    ),
    verdicts: everywhere(),
  },
  {
    id: 'response-links',
    group: 'Responses',
    title: 'response `links`',
    detect: detect.responseMember('links'),
    example: operationExample({
      responses: {
        '200': {
          description: 'OK',
          ...jsonContent({ type: 'object', properties: { id: stringSchema } }),
          links: { self: { operationId: 'example', parameters: {} } },
        },
      },
    }),
    verdicts: everywhere(),
  },
];

const serversList: Construct[] = [
  {
    id: 'servers-root',
    group: 'Servers',
    title: '`servers` at the root',
    detect: detect.rootServers,
    example: operationExample({}),
    verdicts: everywhere(),
  },
  {
    id: 'servers-path',
    group: 'Servers',
    title: '`servers` on a path item',
    detect: detect.pathItemServers,
    example: {
      paths: {
        '/things': { servers: [{ url: 'http://other/v1' }], get: { operationId: 'example', responses: { '200': ok } } },
      },
    },
    verdicts: refused('only the root servers are read'),
  },
  {
    id: 'servers-operation',
    group: 'Servers',
    title: '`servers` on an operation',
    detect: detect.operationMember('servers', (value) => Array.isArray(value) && value.length > 0),
    example: operationExample({ servers: [{ url: 'http://other/v1' }] }),
    verdicts: refused('only the root servers are read'),
  },
  {
    id: 'servers-variables',
    group: 'Servers',
    title: 'server URL `variables`',
    detect: detect.serverVariables,
    example: {
      ...operationExample({}),
      servers: [{ url: 'http://{host}/v1', variables: { host: { default: 'localhost' } } }],
    },
    verdicts: refused('server URLs are read literally'),
  },
];

const securityList: Construct[] = [
  {
    id: 'security-bearer',
    group: 'Security',
    title: 'HTTP `bearer` scheme',
    detect: detect.securityScheme(
      (scheme) => scheme['type'] === 'http' && String(scheme['scheme']).toLowerCase() === 'bearer',
    ),
    example: {
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearerAuth: [] }],
      ...operationExample({}),
    },
    verdicts: everywhere(),
  },
  {
    id: 'security-api-key-header',
    group: 'Security',
    title: '`apiKey` in a header',
    detect: detect.securityScheme((scheme) => scheme['type'] === 'apiKey' && scheme['in'] === 'header'),
    example: apiKeyIn('header'),
    verdicts: refused('the HTTP layer authenticates bearer tokens only'),
  },
  {
    id: 'security-api-key-query',
    group: 'Security',
    title: '`apiKey` in the query',
    detect: detect.securityScheme((scheme) => scheme['type'] === 'apiKey' && scheme['in'] === 'query'),
    example: apiKeyIn('query'),
    verdicts: refused('the HTTP layer authenticates bearer tokens only'),
  },
  {
    id: 'security-api-key-cookie',
    group: 'Security',
    title: '`apiKey` in a cookie',
    detect: detect.securityScheme((scheme) => scheme['type'] === 'apiKey' && scheme['in'] === 'cookie'),
    example: apiKeyIn('cookie'),
    verdicts: refused('the HTTP layer authenticates bearer tokens only'),
  },
  {
    id: 'security-other',
    group: 'Security',
    title: 'other schemes (`basic`, `oauth2`, `openIdConnect`, `mutualTLS`)',
    detect: detect.securityScheme(
      (scheme) =>
        !(
          scheme['type'] === 'apiKey' ||
          (scheme['type'] === 'http' && String(scheme['scheme']).toLowerCase() === 'bearer')
        ),
    ),
    example: {
      components: { securitySchemes: { basic: { type: 'http', scheme: 'basic' } } },
      security: [{ basic: [] }],
      ...operationExample({}),
    },
    verdicts: refused('the HTTP layer authenticates bearer tokens only'),
  },
  {
    id: 'security-scopes',
    group: 'Security',
    title: 'per-operation scopes',
    detect: detect.scopedRequirements,
    example: {
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
      ...operationExample({ security: [{ bearerAuth: ['things:read'] }] }),
    },
    verdicts: everywhere(),
  },
  {
    id: 'security-none',
    group: 'Security',
    title: '`security: []` (an operation anyone may call)',
    detect: detect.unsecuredOperations,
    example: {
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearerAuth: [] }],
      ...operationExample({ security: [] }),
    },
    verdicts: refused('every operation is authenticated and every tool sends a key'),
  },
  {
    id: 'security-alternatives',
    group: 'Security',
    title: 'several security requirements (either of two schemes, or two at once)',
    detect: detect.alternativeRequirements,
    example: {
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer' },
          key: { type: 'apiKey', in: 'header', name: 'key' },
        },
      },
      ...operationExample({ security: [{ bearerAuth: [] }, { key: [] }] }),
    },
    verdicts: refused('only the first security requirement is read'),
  },
];

const otherList: Construct[] = [
  {
    id: 'deprecated-operation',
    group: 'Deprecation',
    title: '`deprecated: true` on an operation (with `x-deprecated-at`, `x-sunset`)',
    detect: detect.operationMember('deprecated', (value) => value === true),
    // The HTTP layer answers Deprecation on a deprecated operation's answers, so each declares it.
    example: operationExample({
      deprecated: true,
      'x-deprecated-at': '2026-01-01T00:00:00Z',
      responses: { '200': { description: 'OK', headers: { Deprecation: { schema: { type: 'string' } } } } },
    }),
    verdicts: everywhere(),
  },
  {
    id: 'callbacks',
    group: 'Callbacks and webhooks',
    title: '`callbacks` on an operation',
    detect: detect.operationMember('callbacks'),
    example: operationExample({
      callbacks: { done: { '{$request.body#/url}': { post: { responses: { '200': ok } } } } },
    }),
    verdicts: refused('the service makes no outgoing requests'),
  },
  {
    id: 'webhooks',
    group: 'Callbacks and webhooks',
    title: '`webhooks`',
    detect: detect.webhooks,
    example: { webhooks: { thingChanged: { post: { operationId: 'thingChanged', responses: { '200': ok } } } } },
    verdicts: refused('the service makes no outgoing requests'),
  },
];

export const catalogue: Construct[] = [
  ...mediaTypes,
  ...parametersList,
  ...schemasList,
  ...responsesList,
  ...serversList,
  ...securityList,
  ...otherList,
];

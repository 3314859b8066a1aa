import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import { ApiError } from '../../errors.js';
import { createAjv } from './ajv.js';
import type { DeferredCompilation } from './deferredCompile.js';
import { excerpt } from '../errors/excerpt.js';
import { mediaTypeEntryOf } from '../../openapi/mediaTypes.js';

type JsonSchema = {
  type?: string | string[];
  format?: string;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
};

/**
 * Node lower-cases the names of request headers; fastify adapts a headers
 * schema to that only for its own compiler, so this one does it here.
 */
function lowerCaseHeaderNames(schema: JsonSchema): JsonSchema {
  const properties = Object.fromEntries(
    Object.entries(schema.properties ?? {}).map(([name, property]) => [name.toLowerCase(), property]),
  );
  return {
    ...schema,
    properties,
    ...(schema.required ? { required: schema.required.map((name) => name.toLowerCase()) } : {}),
  };
}

// Bodies are JSON: their types are what they are. Path and query values are
// text, so they are coerced to the declared type (a query parameter declared
// as an array may come once, as a scalar); unknown body fields are
// rejected by the schema (additionalProperties: false), never stripped.
// verbose: an error carries the schema it broke, so that a message can say in
// words what a long pattern expects (validationMessage).
const bodyAjv = createAjv({ coerceTypes: false, useDefaults: true, removeAdditional: false, verbose: true });
const textAjv = createAjv({ coerceTypes: 'array', useDefaults: true, removeAdditional: false, verbose: true });

const integerText = /^[+-]?[0-9]+$/;

/** The ranges of the OpenAPI integer formats; checked on the text, before coercion could round it. */
const formatRanges: Record<string, readonly [bigint, bigint]> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
};

/** Integer properties, and arrays of integers (a repeated query parameter). */
function integerProperties(schema: JsonSchema): { name: string; range: readonly [bigint, bigint] | undefined }[] {
  return Object.entries(schema.properties ?? {}).flatMap(([name, property]) => {
    const integer = property.type === 'array' ? property.items : property;
    return integer?.type === 'integer' ? [{ name, range: formatRanges[integer.format ?? ''] }] : [];
  });
}

function textRuleError(name: string, httpPart: string, keyword: string, message: string) {
  return { instancePath: `/${name}`, keyword, params: {}, message, schemaPath: `#/properties/${name}`, httpPart };
}

/**
 * ajv's coercion would read "0x10" or "1e3" as integers, and would round
 * 9223372036854775808 to a double that passes an int64 check; only plain
 * decimal digits within the declared format's range are taken.
 */
function rejectNonDecimalIntegers(integers: ReturnType<typeof integerProperties>, httpPart: string) {
  return (data: Record<string, unknown>) => {
    for (const { name, range } of integers) {
      const value = data[name];
      for (const text of Array.isArray(value) ? value : [value]) {
        if (typeof text !== 'string') continue;
        if (!integerText.test(text)) return textRuleError(name, httpPart, 'type', 'must be integer');
        const number = BigInt(text);
        if (range && (number < range[0] || number > range[1])) {
          return textRuleError(name, httpPart, 'format', `must be an integer from ${range[0]} to ${range[1]}`);
        }
      }
    }
    return undefined;
  };
}

/**
 * The router matches /v1/pets/ to /v1/pets/{petId} with an empty petId: a
 * path with an empty segment names no resource, so it is a 404 like any
 * other unknown path, not a 400 about the parameter.
 */
function rejectEmptyPathParameters(schema: JsonSchema) {
  const names = Object.keys(schema.properties ?? {});
  return (data: Record<string, unknown>) => {
    const empty = names.find((name) => data[name] === '');
    return empty === undefined
      ? undefined
      : new ApiError(404, 'not_found', `No resource here: the path parameter '${excerpt(empty)}' is empty.`);
  };
}

/**
 * A body of a bytes media type (src/openapi/mediaTypes.ts) is valid when it is the bytes its parser read:
 * its schema (`type: string`, `contentMediaType`, or none at all) names raw bytes, which ajv would take
 * for a JSON string, and its size is the route's body limit, checked while it was read.
 */
function validateBytes(data: unknown) {
  if (Buffer.isBuffer(data)) return { value: data };
  const notBytes = { instancePath: '', keyword: 'type', params: {}, message: 'must be bytes', schemaPath: '#' };
  return { error: Object.assign(new Error('validation failed'), { validation: [notBytes] }) };
}

/** fastify's validator compiler; ajv compiles each schema on its first use (see DeferredCompilation). */
export function validatorCompiler(deferred: DeferredCompilation): FastifySchemaCompiler<JsonSchema> {
  return ({ schema, httpPart, contentType }) => {
    if (httpPart === 'body' && mediaTypeEntryOf(contentType ?? '')?.parse === 'bytes') return validateBytes;
    if (httpPart === 'body') {
      // Answers like the ajv function it stands for: true, or false with the errors on itself.
      const compiled = deferred.defer(() => bodyAjv.compile(schema));
      const validateBody = Object.assign(
        (data: unknown) => {
          const validate = compiled();
          const valid = validate(data);
          validateBody.errors = validate.errors ?? null;
          return valid;
        },
        { errors: null as FastifySchemaValidationError[] | null },
      );
      return validateBody;
    }
    const textSchema = httpPart === 'headers' ? lowerCaseHeaderNames(schema) : schema;
    const compiled = deferred.defer(() => textAjv.compile(textSchema));
    const checkIntegers = rejectNonDecimalIntegers(integerProperties(textSchema), httpPart ?? '');
    const checkEmpty = httpPart === 'params' ? rejectEmptyPathParameters(textSchema) : () => undefined;
    return (data: Record<string, unknown>) => {
      const notFound = checkEmpty(data);
      if (notFound) return { error: notFound };
      const error = checkIntegers(data);
      if (error) return { error: Object.assign(new Error(error.message), { validation: [error] }) } as never;
      const validate = compiled();
      return validate(data)
        ? { value: data }
        : { error: Object.assign(new Error('validation failed'), { validation: validate.errors }) };
    };
  };
}

import type { FastifySchemaCompiler } from 'fastify';
import { createAjv } from './ajv.js';

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
};

// Bodies are JSON: their types are what they are. Path and query values are
// text, so they are coerced to the declared type; unknown body fields are
// rejected by the schema (additionalProperties: false), never stripped.
const bodyAjv = createAjv({ coerceTypes: false, useDefaults: true, removeAdditional: false });
const textAjv = createAjv({ coerceTypes: true, useDefaults: true, removeAdditional: false });

const integerText = /^[+-]?[0-9]+$/;

function integerProperties(schema: JsonSchema): string[] {
  return Object.entries(schema.properties ?? {})
    .filter(([, property]) => property.type === 'integer')
    .map(([name]) => name);
}

/**
 * ajv's coercion would read "0x10" or "1e3" as integers; only plain decimal
 * digits are taken for an integer parameter.
 */
function rejectNonDecimalIntegers(names: string[], httpPart: string) {
  return (data: Record<string, unknown>) => {
    for (const name of names) {
      const value = data[name];
      if (typeof value === 'string' && !integerText.test(value)) {
        return {
          instancePath: `/${name}`,
          keyword: 'type',
          params: { type: 'integer' },
          message: 'must be integer',
          schemaPath: `#/properties/${name}/type`,
          httpPart,
        };
      }
    }
    return undefined;
  };
}

export const validatorCompiler: FastifySchemaCompiler<JsonSchema> = ({ schema, httpPart }) => {
  if (httpPart === 'body') {
    return bodyAjv.compile(schema);
  }
  const validate = textAjv.compile(schema);
  const checkIntegers = rejectNonDecimalIntegers(integerProperties(schema), httpPart ?? '');
  return (data: Record<string, unknown>) => {
    const error = checkIntegers(data);
    if (error) return { error: Object.assign(new Error(error.message), { validation: [error] }) } as never;
    return validate(data) ? { value: data } : { error: Object.assign(new Error('validation failed'), { validation: validate.errors }) };
  };
};

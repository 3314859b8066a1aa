import { Ajv2020, type Options } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';

// Keywords openapi.yaml uses that are not JSON Schema validation keywords.
// Declaring them keeps ajv strict, so a typo in a schema still fails.
const openApiKeywords = ['example', 'xml', 'externalDocs', 'discriminator'];

/**
 * RFC 3339 lets a year be 0000 and an offset be up to ±23:59; PostgreSQL's
 * date and timestamp refuse year 0000 and offsets past ±15:59 (ajv-formats
 * already refuses five-digit years). A date the schema calls valid must be
 * one the service can store, so "date" and "date-time" take years 0001 to
 * 9999 and offsets within ±15:59: anything else is a 400 at validation,
 * never a refusal of the database.
 */
const yearZero = /^0000/;
const offsetPastPostgres = /[+-](?:1[6-9]|2[0-9]):[0-9]{2}$/;

function storable(name: 'date' | 'date-time', text: string): boolean {
  return !yearZero.test(text) && (name === 'date' || !offsetPastPostgres.test(text));
}

function withStorableDates(ajv: Ajv2020): void {
  for (const name of ['date', 'date-time'] as const) {
    const format = fullFormats[name] as {
      validate: (text: string) => boolean;
      compare?: (a: string, b: string) => number | undefined;
    };
    ajv.addFormat(name, {
      type: 'string',
      validate: (text: string) => storable(name, text) && format.validate(text),
      ...(format.compare ? { compare: format.compare } : {}),
    });
  }
}

/**
 * An ajv for the OpenAPI 3.1 dialect (JSON Schema 2020-12), strict, with the
 * OpenAPI formats (dates the database holds).
 *
 * It does not check each schema against the 2020-12 meta-schema (validateSchema):
 * every instance would compile that meta-schema on its first compile, 30-60 ms
 * each, four instances, all inside a cold start. The schemas it compiles are
 * openapi.yaml's, checked against the meta-schema by the test suite
 * (test/contract/schemas.test.ts) before they can ship; strict mode still
 * rejects unknown keywords and impossible types at compile time.
 */
export function createAjv(options: Options = {}): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: false, validateSchema: false, ...options });
  addFormats.default(ajv);
  withStorableDates(ajv);
  for (const keyword of openApiKeywords) ajv.addKeyword(keyword);
  return ajv;
}

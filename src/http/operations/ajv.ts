import { Ajv2020, type Options } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

// Keywords openapi.yaml uses that are not JSON Schema validation keywords.
// Declaring them keeps ajv strict, so a typo in a schema still fails.
const openApiKeywords = ['example', 'xml', 'externalDocs', 'discriminator'];

/**
 * An ajv for the OpenAPI 3.1 dialect (JSON Schema 2020-12), strict, with the OpenAPI formats.
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
  for (const keyword of openApiKeywords) ajv.addKeyword(keyword);
  return ajv;
}

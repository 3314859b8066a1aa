import { Ajv2020, type Options } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

// Keywords openapi.yaml uses that are not JSON Schema validation keywords.
// Declaring them keeps ajv strict, so a typo in a schema still fails.
const openApiKeywords = ['example', 'xml', 'externalDocs', 'discriminator'];

/** An ajv for the OpenAPI 3.1 dialect (JSON Schema 2020-12), strict, with the OpenAPI formats. */
export function createAjv(options: Options = {}): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: false, ...options });
  addFormats.default(ajv);
  for (const keyword of openApiKeywords) ajv.addKeyword(keyword);
  return ajv;
}

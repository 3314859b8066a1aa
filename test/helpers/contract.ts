import { createAjv } from '../../src/http/operations/ajv.js';
import { loadOpenApiDocument } from '../../src/openapi/document.js';

const ajv = createAjv({ allErrors: true });
const headers = (loadOpenApiDocument() as unknown as { components: { headers: Record<string, { schema: object }> } })
  .components.headers;

/** Whether a response header value is valid for the header declared as components/headers/<name> in openapi.yaml. */
export function matchesDeclaredHeader(name: string, value: unknown): boolean {
  const declared = headers[name];
  if (!declared) throw new Error(`openapi.yaml declares no header ${name}`);
  const schema = declared.schema as { type?: string };
  const typed =
    schema.type === 'integer' && typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : value;
  return ajv.validate(declared.schema, typed);
}

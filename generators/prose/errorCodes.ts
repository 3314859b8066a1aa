// The error codes the spec declares, as prose for docs/errors.md (npm run generate, generators/docFacts.ts):
// every schema of the Error object's shape (properties code, message and status) says in its description
// what each code of its `code` enum means, in a table `| code | status | when |`; a code missing there, or a
// row for a code the enum does not have, fails generation.
import type { OpenApiDocument } from '../../src/openapi/document.js';

export interface ErrorSchema {
  name: string;
  codes: { code: string; status: string; when: string }[];
}

interface SchemaLike {
  description?: string;
  properties?: Record<string, { enum?: unknown[] }>;
}

const row = /^\|\s*`?([a-z0-9_]+)`?\s*\|\s*([0-9][0-9, ]*)\s*\|\s*(.+?)\s*\|\s*$/;

/** The Error-shaped schemas of components/schemas, in the spec's order, each code with its statuses and meaning. */
export function errorSchemas(spec: OpenApiDocument): ErrorSchema[] {
  const schemas = (spec.components as { schemas?: Record<string, SchemaLike> }).schemas ?? {};
  return Object.entries(schemas)
    .filter(([, schema]) => ['code', 'message', 'status'].every((key) => schema.properties?.[key] !== undefined))
    .map(([name, schema]) => {
      const codes = (schema.properties?.['code']?.enum ?? []).map(String);
      const rows = new Map(
        (schema.description ?? '').split('\n').flatMap((line) => {
          const match = row.exec(line.trim());
          return match ? [[match[1] ?? '', { status: (match[2] ?? '').trim(), when: match[3] ?? '' }] as const] : [];
        }),
      );
      for (const listed of rows.keys())
        if (!codes.includes(listed))
          throw new Error(`openapi.yaml: ${name}'s description has a row for ${listed}, which its code enum lacks`);
      return {
        name,
        codes: codes.map((code) => {
          const facts = rows.get(code);
          if (facts === undefined)
            throw new Error(
              `openapi.yaml: ${name}'s code ${code} needs its row in ${name}'s description: | ${code} | <status> | <when> |`,
            );
          return { code, ...facts };
        }),
      };
    });
}

/** Every code of every Error-shaped schema: docs/errors.md's table. */
export function errorCodeTable(spec: OpenApiDocument): string {
  const rows = errorSchemas(spec).flatMap((schema) =>
    schema.codes.map(
      ({ code, status, when }) =>
        `| \`${code}\` | ${status} | ${when}${schema.name === 'Error' ? '' : ` (schema \`${schema.name}\`)`} |`,
    ),
  );
  return ['| code | status | when |', '|---|---|---|', ...rows].join('\n');
}

import { readFileSync } from 'node:fs';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { apiBasePath, loadOpenApiDocument, openApiJsonText } from '../../openapi/document.js';
import { specPath } from '../../openapi/files.js';

// Everything the docs page loads comes from this server; the policy makes a
// browser refuse anything else, so the page works offline or it visibly breaks.
const docsCsp = [
  "default-src 'self'",
  "img-src 'self' data:",
  // Swagger UI sets style attributes at run time.
  "style-src 'self' 'unsafe-inline'",
  "script-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'none'",
].join('; ');

interface Server {
  url: string;
  description?: string;
  'x-internal'?: boolean;
}

/**
 * The spec as the docs page sees it (at /docs/json, Swagger UI's own URL):
 * "Try it out" calls the service that serves the page, wherever it runs (a
 * path relative to the page's origin), then the public servers; servers
 * marked x-internal are not offered.
 */
export function specForDocsPage(spec: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const servers = (spec['servers'] as Server[] | undefined) ?? [];
  return {
    ...spec,
    servers: [
      { url: apiBasePath, description: 'This service (the one serving this page)' },
      ...servers.filter((server) => server['x-internal'] !== true),
    ],
  };
}

/**
 * The published contract: openapi.yaml as checked in at /v1/openapi.json and
 * /v1/openapi.yaml, and Swagger UI with its bundled assets at /docs (its spec
 * through @fastify/swagger in static mode). No key needed: these routes declare no
 * security schemes.
 */
export async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, { mode: 'static', specification: { document: loadOpenApiDocument() as never } });
  // The JSON as generated from the YAML, not re-serialised: a JavaScript
  // number would round the int64 bounds.
  const checkedInJson = openApiJsonText();
  app.get(`${apiBasePath}/openapi.json`, { schema: { hide: true } }, async (_request, reply) => {
    reply.type('application/json; charset=utf-8');
    return checkedInJson;
  });
  // The YAML is sent byte for byte as checked in (comments and order kept);
  // @fastify/swagger would re-serialise it.
  const checkedIn = readFileSync(specPath, 'utf8');
  app.get(`${apiBasePath}/openapi.yaml`, { schema: { hide: true } }, async (_request, reply) => {
    reply.type('application/yaml; charset=utf-8');
    return checkedIn;
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: docsCsp,
    transformSpecification: (spec) => specForDocsPage(spec),
    uiConfig: {
      // Without the top bar: it would show /docs/json, the page's own view
      // of the spec; the published one is at /v1/openapi.json.
      layout: 'BaseLayout',
      deepLinking: true,
      displayOperationId: true,
      displayRequestDuration: true,
      showExtensions: true,
      tryItOutEnabled: false,
    },
    theme: { title: 'Pet Store Service API' },
  });
}

import { readFileSync } from 'node:fs';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { apiPrefix } from '../contract.js';
import { specPath } from '../paths.js';

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

/**
 * The published contract: openapi.yaml as checked in (through @fastify/swagger
 * in static mode) at /v1/openapi.json and /v1/openapi.yaml, and Swagger UI
 * with its bundled assets at /docs. No key needed: these routes declare no
 * security schemes.
 */
export async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, { mode: 'static', specification: { path: specPath, baseDir: '' } });
  app.get(`${apiPrefix}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
  // The YAML is sent byte for byte as checked in (comments and order kept);
  // @fastify/swagger would re-serialise it.
  const checkedIn = readFileSync(specPath, 'utf8');
  app.get(`${apiPrefix}/openapi.yaml`, { schema: { hide: true } }, async (_request, reply) => {
    reply.type('application/yaml; charset=utf-8');
    return checkedIn;
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: docsCsp,
    uiConfig: { deepLinking: true, displayOperationId: true, displayRequestDuration: true, showExtensions: true, tryItOutEnabled: false },
    theme: { title: 'Pet Store Service API' },
  });
}

import Fastify, { type RouteOptions } from 'fastify';
import openapiGlue from 'fastify-openapi-glue';
import { basePathOf } from '../src/openapi/basePath.js';
import type { OpenApiDocument, RouteEntry } from '../src/openapi/document.js';

/**
 * The route table of the spec, computed by fastify-openapi-glue itself (its
 * spec validation, $ref resolution and OpenAPI-to-JSON-Schema mapping) on a
 * throwaway fastify instance. `npm run generate` writes it to
 * src/generated/routes.json, so that a start pays none of that work; a test
 * checks the file against this function.
 */
export async function computeRouteTable(spec: OpenApiDocument): Promise<RouteEntry[]> {
  const routes: RouteEntry[] = [];
  // Only the methods the spec declares: fastify would add a HEAD route beside
  // each GET, and the app, registering this table, would serve HEAD after all.
  const app = Fastify({ logger: false, exposeHeadRoutes: false });
  app.addHook('onRoute', (route) => {
    const operationId = route.config?.operationId;
    if (typeof operationId !== 'string') return;
    const method = Array.isArray(route.method) ? route.method.join(',') : route.method;
    // A snapshot before fastify compiles (and may annotate) the schemas.
    const schema = JSON.parse(JSON.stringify(route.schema ?? {})) as Record<string, unknown>;
    routes.push({ method, url: route.url, operationId, schema });
  });
  await app.register(openapiGlue, {
    specification: spec,
    prefix: basePathOf(spec),
    // The glue supplies method, url and schema itself (see glue.ts).
    operationResolver: (operationId: string) =>
      ({ handler: async () => null, config: { operationId } }) as unknown as RouteOptions,
  });
  await app.ready();
  await app.close();
  return routes;
}

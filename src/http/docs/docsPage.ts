import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiBasePath, loadOpenApiDocument, publishedText, type ServerObject } from '../../openapi/document.js';
import { arazzoPath } from '../../openapi/files.js';
import { isPublishedServer } from '../../openapi/published.js';

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
 * The spec as the docs page sees it (at /docs/json, Swagger UI's own URL):
 * "Try it out" calls the service that serves the page, wherever it runs (a
 * path relative to the page's origin), then the published servers (none
 * marked x-internal, published.ts).
 */
export function specForDocsPage(spec: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const servers = (spec['servers'] as ServerObject[] | undefined) ?? [];
  return {
    ...spec,
    servers: [
      { url: apiBasePath(), description: 'This service (the one serving this page)' },
      ...servers.filter(isPublishedServer),
    ],
  };
}

/**
 * The published contract: openapi.yaml without its internal servers at
 * /v1/openapi.json and /v1/openapi.yaml (published.ts), its Arazzo workflows at /v1/pets.arazzo.yaml, and Swagger
 * UI with its bundled assets at /docs. No key needed: these routes declare no
 * security schemes.
 */
export async function registerDocs(app: FastifyInstance): Promise<void> {
  // The JSON as generated from the YAML, not re-serialised: a JavaScript
  // number would round the int64 bounds.
  const checkedInJson = publishedText('json');
  app.get(`${apiBasePath()}/openapi.json`, { schema: { hide: true } }, async (_request, reply) => {
    reply.type('application/json; charset=utf-8');
    return checkedInJson;
  });
  // The YAML is sent as checked in but for the internal servers' lines
  // (comments and order kept); @fastify/swagger would re-serialise it.
  const checkedIn = publishedText('yaml');
  app.get(`${apiBasePath()}/openapi.yaml`, { schema: { hide: true } }, async (_request, reply) => {
    reply.type('application/yaml; charset=utf-8');
    return checkedIn;
  });
  // Byte for byte too: its source description, ./openapi.yaml, resolves to
  // the route above, so a runner given this URL finds the spec beside it.
  const workflows = readFileSync(arazzoPath, 'utf8');
  app.get(`${apiBasePath()}/pets.arazzo.yaml`, { schema: { hide: true } }, async (_request, reply) => {
    reply.type('application/yaml; charset=utf-8');
    return workflows;
  });
  const page = docsPage(app);
  app.get(docsPrefix, { schema: { hide: true } }, page);
  app.get(`${docsPrefix}/*`, { schema: { hide: true } }, page);
}

const docsPrefix = '/docs';

/**
 * Swagger UI (@fastify/swagger-ui, @fastify/static and @fastify/swagger)
 * is loaded on the first request for /docs, in an application of its own
 * that this route asks in-process, instead of at start: loading it took
 * about 100 ms of CPU of each start (docs/performance.md, "Cold start"),
 * and fastify takes no routes once it listens. Its answers pass through this
 * server's hooks like any other: a 404 of its own is this server's 404, any
 * other refusal the Error object.
 */
function docsPage(app: FastifyInstance) {
  let docsApp: Promise<FastifyInstance> | undefined;
  app.addHook('onClose', async () => {
    await (await docsApp?.catch(() => undefined))?.close();
  });
  return async function forwardToDocsPage(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    docsApp ??= buildDocsApp().catch((error: unknown) => {
      docsApp = undefined;
      throw error;
    });
    const answer = await (
      await docsApp
    ).inject({
      method: 'GET',
      url: request.url,
      headers: forwardedHeaders(request.headers),
    });
    if (answer.statusCode === 404) {
      reply.callNotFound();
      return reply;
    }
    if (answer.statusCode >= 400) {
      throw Object.assign(new Error(`The docs page could not answer (${answer.statusCode}).`), {
        statusCode: answer.statusCode,
      });
    }
    reply.code(answer.statusCode);
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !perConnectionHeaders.has(name)) reply.header(name, value);
    }
    return reply.send(answer.rawPayload);
  };
}

// Headers of one connection or one message's framing: this server sets its own.
const perConnectionHeaders = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'date',
  'host',
]);

function forwardedHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const forwarded: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !perConnectionHeaders.has(name)) forwarded[name] = value;
  }
  return forwarded;
}

async function buildDocsApp(): Promise<FastifyInstance> {
  const [{ default: fastify }, { default: swagger }, { default: swaggerUi }] = await Promise.all([
    import('fastify'),
    import('@fastify/swagger'),
    import('@fastify/swagger-ui'),
  ]);
  const docsApp = fastify({ logger: false });
  await docsApp.register(swagger, { mode: 'static', specification: { document: loadOpenApiDocument() as never } });
  await docsApp.register(swaggerUi, {
    routePrefix: docsPrefix,
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
  await docsApp.ready();
  return docsApp;
}

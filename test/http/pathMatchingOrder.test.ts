import type { FastifyReply, FastifyRequest } from 'fastify';
import t from 'tap';
import type { HandlerMap } from '../../src/handlers/types.js';
import { operationResolver } from '../../src/http/operations/glue.js';
import { notFoundHandler, pathsMatchedBefore } from '../../src/http/operations/notFound.js';
import { httpMethods, loadOpenApiDocument, loadRouteTable, type OpenApiDocument } from '../../src/openapi/document.js';
import { ApiError } from '../../src/errors.js';

/**
 * OpenAPI 3.1 (Paths Object): a path with a literal segment is matched before one with a parameter there,
 * whatever their order in the document. With POST /pets/exports added after /pets/{petId}, GET, PUT and
 * DELETE of /v1/pets/exports are that path's 405 (Allow: POST), not getPet's answer nor a 405 allowing GET.
 */
function specWithExports(): OpenApiDocument {
  const spec = structuredClone(loadOpenApiDocument());
  const paths = spec.paths as Record<string, unknown>;
  paths['/pets/exports'] = {
    post: { operationId: 'createPetExport', responses: { '202': { description: 'accepted' } } },
  };
  return spec;
}

const request = (method: string, url: string) => ({ method, url }) as FastifyRequest;
const reply = {} as FastifyReply;

/** What a route's onRequest step passes to done for a request. */
function stepAnswer(
  step: (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void,
  method: string,
  url: string,
): Error | undefined {
  let answered: Error | undefined;
  step(request(method, url), reply, (error) => {
    answered = error;
  });
  return answered;
}

t.test(
  'an unrouted method on a literal path is its 405, though a templated path comes first in the document',
  async (t) => {
    const spec = specWithExports();
    const paths = Object.keys(spec.paths);
    t.ok(paths.indexOf('/pets/{petId}') < paths.indexOf('/pets/exports'), 'the templated path is listed first');
    const handle = notFoundHandler(spec);
    const thrown = t.throws(() => handle(request('PUT', '/v1/pets/exports'), reply)) as ApiError;
    t.equal(thrown.status, 405);
    t.equal(thrown.headers?.['allow'], 'POST', "Allow names the literal path's methods");
    // The methods the spec declares on the templated path (GET today; a worked example adds more).
    const item = spec.paths['/pets/{petId}'] as Record<string, unknown>;
    const declared = httpMethods.filter((method) => item[method] !== undefined).map((method) => method.toUpperCase());
    const other = ['PUT', 'POST', 'DELETE', 'PATCH'].find((method) => !declared.includes(method)) ?? 'TRACE';
    const onItem = t.throws(() => handle(request(other, '/v1/pets/7'), reply)) as ApiError;
    t.equal(onItem.headers?.['allow'], declared.join(', '), "another id is still the templated path's");
  },
);

t.test("the templated path's route hands the literal path's URLs to it: a 405, before anything else", async (t) => {
  const spec = specWithExports();
  const step = pathsMatchedBefore(spec, '/pets/{petId}');
  if (!step) throw new Error('no step on getPet for /pets/exports');
  const refused = stepAnswer(step, 'GET', '/v1/pets/exports?x=1') as ApiError;
  t.equal(refused.status, 405);
  t.equal(refused.headers?.['allow'], 'POST');
  t.equal(stepAnswer(step, 'GET', '/v1/pets/7'), undefined, 'an id passes on to getPet');
  // RFC 3986 §6.2.2: an escaped unreserved character is that character, as the router decodes it.
  for (const url of ['/v1/pets/%65xports', '/v1/pets/%65%78ports', '/v1/pets/export%73', '/v1/pets/%65xports?x=%41'])
    t.equal((stepAnswer(step, 'PUT', url) as ApiError | undefined)?.status, 405, `${url} is /v1/pets/exports`);
  t.equal(stepAnswer(step, 'PUT', '/v1/pets/%45xports'), undefined, '%45 is E: another id');
  const thrown = t.throws(() => notFoundHandler(spec)(request('DELETE', '/v1/pets/%65xports'), reply)) as ApiError;
  t.equal(thrown.headers?.['allow'], 'POST', "the 405 reads the URL as the step does: the literal path's Allow");
  t.match(thrown.message, /on \/v1\/pets\/exports;/, 'and names the path as read');
  t.equal(pathsMatchedBefore(spec, '/pets/exports'), undefined, 'nothing comes before the literal path');
  t.equal(pathsMatchedBefore(spec, '/pets'), undefined, 'nor before a path no other overlaps');

  // Wired into the route the glue builds for getPet, first of its onRequest steps.
  const routes = loadRouteTable();
  const route = routes.find((entry) => entry.operationId === 'getPet')!;
  const handlers = { getPet: () => Promise.resolve({ status: 200 }) } as unknown as HandlerMap;
  const compilePath = () => ({ arrival: [], admission: [], whole: [] });
  const options = operationResolver(spec, handlers, compilePath, routes)(route);
  const steps = [options.onRequest ?? []].flat() as Array<Parameters<typeof stepAnswer>[0]>;
  t.equal(
    (stepAnswer(steps[0]!, 'GET', '/v1/pets/exports') as ApiError | undefined)?.status,
    405,
    "getPet's first step",
  );
  const today = operationResolver(loadOpenApiDocument(), handlers, compilePath, routes)(route);
  t.notOk(
    [today.onRequest ?? []].flat().some((step) => (step as { name?: string }).name === 'answerPathMatchedBefore'),
    "today's spec has no literal path beside getPet's: the route has no such step",
  );
});

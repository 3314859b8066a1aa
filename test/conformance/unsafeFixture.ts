import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { isSafe, kindOfParameter, resourceKinds, type ResourceKind } from '../../lib/conformance/resources.js';
import { loadContract, readLocalSpec, type Operation } from '../../lib/conformance/spec.js';
import { dereference, type JsonObject } from '../../lib/openapi/dereference.js';
import { asRecords } from '../../src/db/records.js';
import { petColumns, petNullsKept } from '../../src/db/pets.js';
import { publishedSpec } from '../../src/openapi/published.js';
import type { TestApp } from '../helpers/app.js';

/**
 * The spec with two operations it does not have, on a resource that exists:
 * `DELETE /pets/{petId}` (204) and `PATCH /pets/{petId}` (a merge patch,
 * 200 with the pet), their `petId` narrowed to 1..100, so that a generated
 * id names a pet a store already holds far more often than int64 would.
 * The tools must handle both without a line about them; the links of the
 * 201 name them as a contributor would.
 */
export function specWithUnsafeOperations(): JsonObject {
  const spec = structuredClone(readLocalSpec()) as Record<string, any>;
  spec['components']['parameters']['NarrowPetId'] = {
    name: 'petId',
    in: 'path',
    required: true,
    schema: { type: 'integer', format: 'int64', minimum: 1, maximum: 100 },
  };
  spec['components']['schemas']['PetPatch'] = {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      name: { $ref: '#/components/schemas/PetName' },
      categoryId: { $ref: '#/components/schemas/CategoryId' },
      status: { $ref: '#/components/schemas/PetStatus' },
    },
  };
  const refs = (statuses: string[]) =>
    Object.fromEntries(
      statuses.map((status) => {
        const name = {
          '400': 'BadRequest',
          '401': 'Unauthorized',
          '403': 'Forbidden',
          '404': 'NotFound',
          '413': 'PayloadTooLarge',
          '415': 'UnsupportedMediaType',
          '429': 'TooManyRequests',
          '500': 'InternalError',
          '503': 'ServiceUnavailable',
        }[status]!;
        return [status, { $ref: `#/components/responses/${name}` }];
      }),
    );
  const common = ['400', '401', '403', '404', '429', '500', '503'];
  const item = spec['paths']['/pets/{petId}'];
  item['delete'] = {
    operationId: 'deletePet',
    security: [{ bearerAuth: ['pets:write'] }],
    parameters: [{ $ref: '#/components/parameters/NarrowPetId' }],
    responses: { '204': { description: 'Removed.' }, ...refs(common) },
  };
  item['patch'] = {
    operationId: 'updatePet',
    security: [{ bearerAuth: ['pets:write'] }],
    parameters: [{ $ref: '#/components/parameters/NarrowPetId' }],
    requestBody: {
      required: true,
      content: { 'application/merge-patch+json': { schema: { $ref: '#/components/schemas/PetPatch' } } },
    },
    responses: {
      '200': {
        description: 'The animal, changed.',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
      },
      ...refs([...common, '413', '415']),
    },
  };
  const links = spec['paths']['/pets']['post']['responses']['201']['links'];
  links['deletePet'] = { operationId: 'deletePet', parameters: { petId: '$response.body#/id' } };
  links['updatePet'] = { operationId: 'updatePet', parameters: { petId: '$response.body#/id' } };
  return spec as JsonObject;
}

/** An unsafe request the fixture server saw, with the values its path gave the operation's path parameters. */
export interface SeenRequest {
  operationId: string;
  pathParams: Record<string, string>;
}

/** The operation a request is for, by its method and the spec's exact path templates, with its path parameters. */
function operationOf(
  operations: Operation[],
  method: string,
  url: string,
): { operation: Operation; pathParams: Record<string, string> } | undefined {
  const path = url.split('?')[0]!;
  for (const operation of operations.filter((candidate) => candidate.method === method)) {
    const names: string[] = [];
    const pattern = operation.path
      .split(/(\{[^}]+\})/)
      .map((part) => {
        const name = /^\{([^}]+)\}$/.exec(part)?.[1];
        if (name === undefined) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        names.push(name);
        return '([^/]*)';
      })
      .join('');
    const found = new RegExp(`^/v1${pattern}$`).exec(path);
    if (found)
      return {
        operation,
        pathParams: Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(found[index + 1]!)])),
      };
  }
  return undefined;
}

const readBody = async (request: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/**
 * The service with the fixture's two operations: DELETE and PATCH on
 * /v1/pets/{petId} are answered here, on the app's database, after the app
 * itself answered GET of the same path with the same key (authentication,
 * the id's validation and the 404 are the app's); everything else is the
 * app's, but for the published contract, which is the fixture's.
 */
export async function startFixtureServer(
  started: TestApp,
  origin: string,
  spec: JsonObject,
): Promise<{
  url: string;
  seen: SeenRequest[];
  /** Whether the run made the resource this value of the path parameter names (by its kind). */
  isMade(parameter: string, value: string): boolean;
  close(): Promise<void>;
}> {
  const seen: SeenRequest[] = [];
  const { operations } = loadContract(spec);
  const kinds = resourceKinds(operations);
  // The ids each maker's success answered, per kind: an id of another kind is not one of them.
  const made = new Map<ResourceKind, Set<string>>();
  const schemas = (dereference(spec)['components'] as Record<string, Record<string, object>>)['schemas']!;
  const validatePatch = new Ajv2020({ strict: false }).compile(schemas['PetPatch']!);
  const server: Server = createServer((incoming, outgoing) => {
    void (async () => {
      const body = await readBody(incoming);
      const url = incoming.url ?? '/';
      const method = incoming.method ?? 'GET';
      const headers = Object.fromEntries(
        Object.entries(incoming.headers).flatMap(([name, value]) =>
          value === undefined || ['host', 'connection', 'content-length'].includes(name)
            ? []
            : [[name, Array.isArray(value) ? value.join(', ') : value]],
        ),
      ) as Record<string, string>;
      const answer = (status: number, json?: unknown) => {
        outgoing.writeHead(status, json === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' });
        outgoing.end(json === undefined ? undefined : JSON.stringify(json));
      };
      if (method === 'GET' && url === '/v1/openapi.json') {
        // As a deployment publishes it: without the internal servers.
        answer(200, publishedSpec(spec));
        return;
      }
      const target = operationOf(operations, method, url);
      if (target && !isSafe(target.operation) && Object.keys(target.pathParams).length > 0)
        seen.push({ operationId: target.operation.operationId, pathParams: target.pathParams });
      const item = /^\/v1\/pets\/([^/?]*)$/.exec(url);
      if (item && (method === 'DELETE' || method === 'PATCH')) {
        const petId = decodeURIComponent(item[1]!);
        // In the service's order: authentication, then validation, then the lookup.
        const authorization = headers['authorization'] ? { authorization: headers['authorization'] } : {};
        const admitted = await fetch(`${origin}/v1/pets?limit=1`, { headers: authorization });
        if (admitted.status !== 200) {
          answer(admitted.status, JSON.parse(await admitted.text()) as unknown);
          return;
        }
        const invalid = (message: string, status = 400) => {
          answer(status, { code: status === 415 ? 'unsupported_media_type' : 'invalid_request', message, status });
        };
        const id = /^[0-9]{1,3}$/.test(petId) ? Number(petId) : 0;
        if (id < 1 || id > 100) {
          invalid("path parameter 'petId' must be an integer from 1 to 100");
          return;
        }
        // Requests are closed, as the service's routes are: a DELETE declares no body and refuses content.
        if (method === 'DELETE' && body.length > 0) {
          invalid('DELETE /pets/{petId} takes no request body; send none.');
          return;
        }
        let patch: unknown;
        if (method === 'PATCH') {
          if (body.length > 64 * 1024) {
            invalid('Too large.', 413);
            return;
          }
          if (body.length === 0) {
            invalid('body is required');
            return;
          }
          if (!/^application\/merge-patch\+json(;|$)/i.test(headers['content-type'] ?? '')) {
            invalid('Content-Type must be application/merge-patch+json.', 415);
            return;
          }
          try {
            patch = JSON.parse(body.toString('utf8'));
          } catch {
            invalid('body is not JSON');
            return;
          }
          if (!validatePatch(patch)) {
            invalid('body does not match PetPatch');
            return;
          }
        }
        const probe = await fetch(`${origin}${url}`, { headers: authorization });
        if (probe.status !== 200) {
          answer(probe.status, JSON.parse(await probe.text()) as unknown);
          return;
        }
        if (method === 'DELETE') {
          await started.db.query({ text: 'DELETE FROM pets WHERE id = $1' }, [id]);
          answer(204);
          return;
        }
        const fields = patch as { name?: string; categoryId?: number; status?: string };
        const { rows } = await started.db.query<object>(
          {
            text:
              'UPDATE pets SET name = COALESCE($2, name), category_id = COALESCE($3, category_id), ' +
              `status = COALESCE($4, status) WHERE id = $1 RETURNING ${petColumns}`,
          },
          [id, fields.name ?? null, fields.categoryId ?? null, fields.status ?? null],
        );
        // The pet as src/db answers it: the same columns, a NULL behind an optional field left out.
        answer(200, asRecords(rows, petNullsKept)[0]);
        return;
      }
      const forwarded = await fetch(`${origin}${url}`, {
        method,
        headers,
        redirect: 'manual',
        ...(body.length > 0 || !['GET', 'HEAD'].includes(method) ? { body } : {}),
      });
      // Bytes as they came (a photo need be no UTF-8); a maker's answer may have no body (a 201 with Location).
      const answered = Buffer.from(await forwarded.arrayBuffer());
      const maker = kinds
        .flatMap((kind) => kind.makers.map((candidate) => ({ kind, maker: candidate })))
        .find(({ maker: candidate }) => candidate.operation === target?.operation);
      if (maker && forwarded.status === maker.maker.status) {
        const json = answered.length === 0 ? undefined : (JSON.parse(answered.toString('utf8')) as unknown);
        const id = maker.maker.idOf(json, forwarded.headers.get('location'), target!.pathParams);
        if (id !== undefined) made.set(maker.kind, new Set([...(made.get(maker.kind) ?? []), id]));
      }
      const kept = [...forwarded.headers].filter(
        ([name]) =>
          !['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'content-encoding'].includes(name),
      );
      outgoing.writeHead(forwarded.status, Object.fromEntries(kept));
      outgoing.end(answered);
    })().catch((error: unknown) => {
      outgoing.writeHead(502);
      outgoing.end(String(error));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    isMade: (parameter, value) => {
      const kind = kindOfParameter(kinds, parameter);
      return kind !== undefined && made.get(kind)?.has(value) === true;
    },
    close: () =>
      new Promise((resolve) =>
        server.close(() => {
          resolve();
        }),
      ),
  };
}

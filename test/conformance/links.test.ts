import type { AddressInfo } from 'node:net';
import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { ContractClient } from './client.js';
import fc from 'fast-check';
import { valid } from '../../lib/conformance/arbitraries.js';
import { validCases } from '../../lib/conformance/requests.js';
import { atPointer, isSafe, operationsOn, referencedKind, resourceKinds } from '../../lib/conformance/resources.js';
import { basePath, loadContract, type Operation } from '../../lib/conformance/spec.js';
import { httpLimits } from '../../src/http/limits.js';
import { existingResourceRequest, makeResource } from './steps.js';

/**
 * The `links` of openapi.yaml, followed as a stateful tool follows them: each
 * names an operation that exists and parameters it takes, and a value taken
 * from a real answer by the link's runtime expression makes a request of the
 * target, by its declared method, that gets one of its declared successes;
 * a read finds the resource just made, a change answers that resource.
 * Each link starts from an answer of its own, so that a DELETE removes only
 * what was made for it.
 */

const { document, operations } = loadContract();
const byId = new Map(operations.map((operation) => [operation.operationId, operation]));
const seed = 7;

const links = operations.flatMap((operation) =>
  [...operation.responses.values()].flatMap((response) =>
    response.links.map((link) => ({ from: operation, status: Number(response.status), link })),
  ),
);

/** `$response.body#/id`: the JSON pointer into the response body (the only form the spec uses). */
function evaluate(expression: string, body: unknown): unknown {
  const pointer = /^\$response\.body#(\/.*)?$/.exec(expression);
  if (pointer === null) throw new Error(`runtime expression ${expression} is not supported by this test`);
  return atPointer(body, pointer[1] ?? '');
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

const successes = (operation: Operation) =>
  [...operation.responses.keys()].filter((status) => status.startsWith('2')).map(Number);

t.test('every link names an operation and parameters it takes', async (t) => {
  t.ok(links.length > 0, `${links.length} links`);
  for (const { from, link } of links) {
    const target = byId.get(link.operationId);
    t.ok(target, `${from.operationId} ${link.name}: operation ${link.operationId} exists`);
    for (const name of Object.keys(link.parameters))
      t.ok(
        target?.parameters.some((parameter) => parameter.name === name),
        `${link.name}: ${link.operationId} takes ${name}`,
      );
  }
});

// What it made, not what lives at a path of another resource under it (a singleton, absent until it is put):
// a link there would lead to a 404 right after the create, and the test below follows each link expecting a
// declared success, since a 404 is also what a link taking the wrong value gets.
t.test("a maker's answer links to every operation on what it made", async (t) => {
  const kinds = resourceKinds(operations);
  for (const kind of kinds) {
    const onIt = operationsOn(kinds, operations, kind)
      .map((operation) => operation.operationId)
      .sort();
    for (const maker of kind.makers) {
      const linked = maker.operation.responses.get(String(maker.status))!.links.map((link) => link.operationId);
      t.same(
        onIt.filter((operationId) => !linked.includes(operationId)),
        [],
        `${maker.operation.operationId} ${maker.status} links to each of ${onIt.join(', ')}`,
      );
    }
  }
});

t.test("following each link by its target's method gets its declared success", async (t) => {
  const started = await startTestApp(t, 'embedded');
  await started.app.listen({ host: '127.0.0.1', port: 0 });
  const client = new ContractClient(
    `http://127.0.0.1:${(started.app.server.address() as AddressInfo).port}`,
    basePath(document),
    operations,
  );
  t.teardown(() => {
    client.close();
  });
  const context = { key: started.key, bodyLimit: httpLimits.bodyLimitBytes };
  const kinds = resourceKinds(operations);
  let fresh = 0;
  /**
   * The request that answers the link's status: a resource's parents made for it, and for a PUT that makes
   * what its path names a new id (drawn from its schema, or a new resource of the kind it refers to), with
   * no condition, so that it creates (201) rather than replaces what existingResourceRequest made.
   */
  const sourceRequest = async (from: Operation, status: number) => {
    const request = await existingResourceRequest(from, client, context, seed, operations);
    const maker = kinds.flatMap((kind) => kind.makers).find((m) => m.operation === from && m.status === status);
    const clientId = maker?.clientId;
    if (clientId === undefined) return request;
    const id =
      referencedKind(kinds, maker!) === undefined
        ? String(fc.sample(valid(clientId.schema), { numRuns: 1, seed: seed + 1000 + (fresh += 1) })[0])
        : await makeResource(client, operations, clientId.name, context.key, seed);
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(([name]) => !/^if-(none-)?match$/i.test(name)),
    );
    return { ...request, headers, pathParams: { ...request.pathParams, [clientId.name]: id } };
  };
  for (const { from, status, link } of links) {
    const target = byId.get(link.operationId)!;
    const source = await client.send(await sourceRequest(from, status));
    t.equal(source.status, status, `${from.operationId} answers ${status} to follow ${link.name} from`);
    const [sample] = fc.sample(validCases(target, context), { numRuns: 1, seed });
    const request = {
      ...sample!.request,
      intent: `link ${link.name}`,
      pathParams: {} as Record<string, string>,
      query: [] as Array<[string, string]>,
    };
    for (const [name, expression] of Object.entries(link.parameters)) {
      const parameter = target.parameters.find((candidate) => candidate.name === name);
      const value = String(evaluate(expression, source.json));
      if (parameter?.in === 'path') request.pathParams[name] = value;
      else request.query.push([name, value]);
    }
    const followed = await client.send(request);
    t.same(followed.problems, [], `${link.name}: the answer conforms`);
    t.ok(
      successes(target).includes(followed.status),
      `${link.name}: ${target.method} answers ${followed.status}, one of ${successes(target).join(', ')}: ${followed.text}`,
    );
    const sourceSchema = from.responses.get(String(status))?.schema;
    const answered = target.responses.get(String(followed.status))?.schema;
    const resource = source.json as Record<string, unknown>;
    if (sourceSchema === undefined || answered === undefined) continue;
    if (same(answered, sourceSchema)) {
      const found = followed.json as Record<string, unknown>;
      // A read answers the resource as made; a change answers it changed, under the same id. What a 202 names
      // (a status monitor) moves on by itself: a read of it answers the same id, not the same state.
      const accepted = kinds.some((kind) =>
        kind.makers.some((m) => m.operation === from && m.status === status && m.accepted),
      );
      if (isSafe(target) && !accepted) t.same(found, resource, `${link.name}: answers what was made`);
      else
        for (const expression of Object.values(link.parameters))
          t.same(evaluate(expression, found), evaluate(expression, resource), `${link.name}: answers what was made`);
    } else if (same(answered['items'], sourceSchema) && isSafe(target)) {
      t.same(followed.json, [resource], `${link.name}: finds what was made`);
    }
  }
});

import type { AddressInfo } from 'node:net';
import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { ContractClient } from './client.js';
import { basePath, loadContract, readLocalSpec } from '../../lib/conformance/spec.js';

/**
 * The `links` of openapi.yaml, followed as a stateful tool follows them: each
 * names an operation that exists and parameters it takes, and a value taken
 * from a real response by the link's runtime expression makes a request that
 * finds the resource just made.
 */

const { document, operations } = loadContract();
const raw = readLocalSpec() as Record<string, any>;

interface Link {
  from: string;
  status: string;
  name: string;
  operationId: string;
  parameters: Record<string, string>;
}

function linksOf(): Link[] {
  const links: Link[] = [];
  for (const item of Object.values(raw['paths'] as Record<string, Record<string, any>>))
    for (const operation of Object.values(item))
      for (const [status, response] of Object.entries((operation?.responses ?? {}) as Record<string, any>))
        for (const [name, link] of Object.entries((response?.links ?? {}) as Record<string, any>))
          links.push({
            from: operation.operationId,
            status,
            name,
            operationId: link.operationId,
            parameters: link.parameters,
          });
  return links;
}

/** `$response.body#/id`: the JSON pointer into the response body (the only form the spec uses). */
function evaluate(expression: string, body: unknown): unknown {
  const pointer = /^\$response\.body#(\/.*)$/.exec(expression)?.[1];
  if (pointer === undefined) throw new Error(`runtime expression ${expression} is not supported by this test`);
  return pointer
    .split('/')
    .slice(1)
    .reduce<unknown>(
      (value, key) => (value as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')],
      body,
    );
}

t.test("createPet's 201 links to the operations that take its id, and following them finds the pet", async (t) => {
  const links = linksOf();
  const fromCreate = links.filter((link) => link.from === 'createPet' && link.status === '201');
  t.same(
    fromCreate.map((link) => link.operationId).sort(),
    operations
      .filter((operation) => operation.operationId !== 'createPet')
      .filter((operation) => operation.parameters.some((parameter) => ['id', 'petId'].includes(parameter.name)))
      .map((operation) => operation.operationId)
      .sort(),
    'a link to every operation that takes a pet id',
  );
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
  const body = JSON.stringify({ name: 'Linked', categoryId: 2 });
  const created = await client.send({
    operationId: 'createPet',
    intent: 'a pet to follow links from',
    pathParams: {},
    query: [],
    headers: { ...started.auth, 'content-type': 'application/json' },
    body,
  });
  t.equal(created.status, 201);
  for (const link of links) {
    const target = operations.find((operation) => operation.operationId === link.operationId);
    t.ok(target, `${link.name}: operation ${link.operationId} exists`);
    if (!target || link.from !== 'createPet') continue;
    const request = {
      operationId: target.operationId,
      intent: `link ${link.name}`,
      pathParams: {} as Record<string, string>,
      query: [] as Array<[string, string]>,
      headers: started.auth,
    };
    for (const [name, expression] of Object.entries(link.parameters)) {
      const parameter = target.parameters.find((candidate) => candidate.name === name);
      t.ok(parameter, `${link.name}: ${link.operationId} takes ${name}`);
      const value = String(evaluate(expression, created.json));
      if (parameter?.in === 'path') request.pathParams[name] = value;
      else request.query.push([name, value]);
    }
    const followed = await client.send(request);
    t.same(followed.problems, [], `${link.name}: the answer conforms`);
    t.equal(followed.status, 200, `${link.name}: ${followed.text}`);
    const found = Array.isArray(followed.json) ? followed.json : [followed.json];
    t.same(found, [created.json], `${link.name}: finds the pet just made`);
  }
});

import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { aimAtOwn, invalidCases, validCases } from '../../lib/conformance/requests.js';
import { isSafe, resourceKinds } from '../../lib/conformance/resources.js';
import { loadContract, type Operation } from '../../lib/conformance/spec.js';
import { emptyModel, statefulCommands, type StatefulTransport } from '../../lib/conformance/stateful.js';
import { Exchanger } from '../../scripts/verify/exchange.js';
import { Findings } from '../../scripts/verify/findings.js';
import { PoliteClient } from '../../scripts/verify/http.js';
import { OwnResources } from '../../scripts/verify/steps.js';
import { runVerification } from '../../scripts/verify/verify.js';
import { httpLimits } from '../../src/http/limits.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { postgresUnavailableReason } from '../helpers/databases.js';
import { ContractClient } from './client.js';
import { specWithUnsafeOperations, startFixtureServer } from './unsafeFixture.js';
import { emptyStore } from '../helpers/emptyStore.js';

/**
 * The tools that send requests to a deployment against a spec with unsafe
 * operations openapi.yaml lacks (test/conformance/unsafeFixture.ts), which
 * none of them names, nor this test: what to expect is read from the spec.
 * An unsafe request names only resources the run made, and the stateful
 * model follows what they do from HTTP's semantics and the spec alone.
 */

const spec = specWithUnsafeOperations();
const { operations } = loadContract(spec);
const kinds = resourceKinds(operations);
const pathNames = (operation: Operation) =>
  operation.parameters.filter((parameter) => parameter.in === 'path').map(({ name }) => name);
// The unsafe operations that name a resource by their path: the fixture's, and any openapi.yaml has.
const unsafeOnItem = operations.filter((operation) => !isSafe(operation) && pathNames(operation).length > 0);
const successOf = (operation: Operation) => [...operation.responses.keys()].find((status) => status.startsWith('2'))!;
const context = { key: 'k'.repeat(40), bodyLimit: httpLimits.bodyLimitBytes };
const digit = /\p{Nd}/u;

t.test('the planner aims every unsafe request that names a pet at one the run made', async (t) => {
  t.ok(
    unsafeOnItem.length > 0,
    `unsafe operations on a resource: ${unsafeOnItem.map((operation) => operation.operationId).join(', ')}`,
  );
  for (const operation of unsafeOnItem) {
    const names = pathNames(operation);
    const cases = [
      ...fc.sample(validCases(operation, context), { numRuns: 300, seed: 1 }),
      ...fc.sample(invalidCases(operation, context), { numRuns: 600, seed: 1 }),
    ];
    const foreign: string[] = [];
    let aimed = 0;
    for (const { request } of cases) {
      const sent = aimAtOwn(operation, request, () => 'own');
      if (sent === undefined) continue;
      if (names.every((name) => sent.pathParams[name] === 'own')) aimed += 1;
      for (const name of names)
        if (sent.pathParams[name] !== 'own' && digit.test(sent.pathParams[name] ?? ''))
          foreign.push(`${request.intent}: ${name} ${sent.pathParams[name]}`);
      const without = aimAtOwn(operation, request, () => undefined);
      for (const name of names)
        if (without !== undefined && digit.test(without.pathParams[name] ?? ''))
          foreign.push(`${request.intent} with nothing made: ${name} ${without.pathParams[name]}`);
    }
    t.same(foreign, [], `${operation.operationId}: no request names an id the run did not make`);
    t.ok(aimed > cases.length / 4, `${operation.operationId}: ${aimed} of ${cases.length} aimed at the run's own`);
  }
  const getPet = operations.find((operation) => isSafe(operation) && pathNames(operation).length > 0)!;
  const [read] = fc.sample(validCases(getPet, context), { numRuns: 1, seed: 1 });
  t.same(
    aimAtOwn(getPet, read!.request, () => 'own'),
    read!.request,
    'a safe method is sent as generated',
  );
});

t.test("verify's exchanger sends no unsafe request naming a pet the run did not make, whoever built it", async (t) => {
  const findings = new Findings();
  const own = new OwnResources(resourceKinds(operations));
  const exchanger = new Exchanger(
    new URL('http://127.0.0.1:1/v1/'),
    new PoliteClient(findings, 10),
    findings,
    'k',
    Date.now,
    own,
  );
  const unsafe = unsafeOnItem[0]!;
  const pathParams = Object.fromEntries(pathNames(unsafe).map((name) => [name, '1']));
  const request = { operationId: unsafe.operationId, intent: 'by hand', pathParams, query: [], headers: {} };
  t.equal(await exchanger.send(unsafe, request), undefined, `${unsafe.operationId} not sent`);
  t.equal(findings.sent, 0);
  t.match(findings.failures, [{ check: 'unsafe request to a resource the run did not make' }]);
});

async function fixtureDeployment(
  t: Test,
): Promise<{ started: TestApp } & Awaited<ReturnType<typeof startFixtureServer>>> {
  const backend = (await postgresUnavailableReason()) === undefined ? 'postgres' : 'embedded';
  const started = await startTestApp(t, backend);
  await started.app.listen({ host: '127.0.0.1', port: 0 });
  const origin = `http://127.0.0.1:${(started.app.server.address() as AddressInfo).port}`;
  const fixture = await startFixtureServer(started, origin, spec);
  t.teardown(() => fixture.close());
  return { started, ...fixture };
}

const petsUpTo = async (db: TestApp['db'], last: number) =>
  (
    await db.query(
      {
        text: 'SELECT id, name, category_id, status FROM pets WHERE id <= $1 ORDER BY id',
      },
      [last],
    )
  ).rows;

t.test('npm run verify in write mode leaves every pet it did not make as it was', async (t) => {
  const { started, url, isMade, seen } = await fixtureDeployment(t);
  await started.db.execScript(
    "INSERT INTO pets (name, category_id) SELECT 'there before ' || n, 1 FROM generate_series(1, 40) AS n",
  );
  const before = await petsUpTo(started.db, 40);
  t.equal(before.length, 40);
  const findings = await runVerification({
    baseUrl: `${url}/v1`,
    apiKey: started.key,
    readOnly: false,
    maxRequests: 250,
    seed: 7,
    spec,
    wait: () => Promise.resolve(),
  });
  t.same(await petsUpTo(started.db, 40), before, 'every pet that existed before the run is there, unchanged');
  const foreign = seen.filter(({ pathParams }) =>
    Object.entries(pathParams).some(([name, value]) => digit.test(value) && !isMade(name, value)),
  );
  t.ok(seen.length > 0, `${seen.length} unsafe requests named a resource`);
  t.same(foreign, [], 'every unsafe request named only resources the run made, each of its own kind');
  for (const operation of unsafeOnItem) {
    // A success it declares (a PUT that makes answers 201 or 200, whichever the run's state gives).
    const successes = [...operation.responses.keys()].filter((status) => status.startsWith('2'));
    t.ok(
      successes.some((status) => findings.rows.has(`${operation.operationId} ${status}`)),
      `${operation.operationId} ${successes.join(' or ')} verified`,
    );
    for (const status of ['401', '400'])
      t.ok(findings.rows.has(`${operation.operationId} ${status}`), `${operation.operationId} ${status} verified`);
  }
  t.same(
    findings.failures.map((failure) => `${failure.subject} ${failure.check}: ${failure.message.slice(0, 300)}`),
    [],
    'and the fixture passes',
  );
});

t.test('the stateful model follows DELETE and PATCH from the spec alone', async (t) => {
  const { started, url } = await fixtureDeployment(t);
  const client = new ContractClient(url, '/v1', operations);
  t.teardown(() => {
    client.close();
  });
  const real: StatefulTransport = {
    send: (request, target) => (target === undefined ? client.send(request) : client.sendTo(target, request)),
  };
  const commands = statefulCommands({
    operations,
    authorization: started.auth.authorization,
    basePath: '/v1',
    exclusive: true,
    readOnly: false,
    retired: new Set(),
    keyPrefix: `unsafe-${Date.now()}`,
  });
  // Each operation on a resource's exact item path: its success, and its 404 where it declares one.
  const expected = operations
    .filter((operation) => kinds.some((kind) => kind.itemPaths.has(operation.path)))
    .flatMap((operation) =>
      [successOf(operation), ...(operation.responses.has('404') ? ['404'] : [])].map(
        (status) => `${operation.operationId} ${status}`,
      ),
    );
  // Batches of sequences until every pair was seen: two on this spec; with every worked example applied, whose
  // commands make each one rarer, 35 (the seeds are fixed).
  for (let batch = 0; batch < 80 && expected.some((pair) => !client.observed.has(pair)); batch += 1) {
    const details = await fc.check(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 25 }), async (sequence) => {
        await emptyStore(started.db);
        await fc.asyncModelRun(() => ({ model: emptyModel(), real }), sequence);
      }),
      { numRuns: 25, seed: 11 + batch },
    );
    t.notOk(details.failed, `batch ${batch + 1}: every answer agrees with the model`, {
      error: String(details.errorInstance),
      counterexample: fc.defaultReportMessage(details),
    });
    if (details.failed) break;
  }
  for (const pair of expected) t.ok(client.observed.has(pair), `${pair} produced by the model's commands`);
});

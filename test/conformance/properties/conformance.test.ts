import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { buildApp } from '../../../src/app.js';
import { issueKey } from '../../../src/auth/provisioning.js';
import { DatabaseUnavailableError, openDatabase } from '../../../src/db/index.js';
import { httpLimits } from '../../../src/http/limits.js';
import { startTestApp, testConfig, testLimits, type TestApp } from '../../helpers/app.js';
import { postgresUnavailableReason, type Backend } from '../../helpers/databases.js';
import { ContractClient, type TestRequest } from '../client.js';
import { invalidCases, validCases, type Case, type GeneratorContext } from '../../../lib/conformance/requests.js';
import { basePath, loadContract, type Operation } from '../../../lib/conformance/spec.js';
import { existingResourceRequest, startFaultableApp, successStatuses } from '../steps.js';
import { valid } from '../../../lib/conformance/arbitraries.js';
import { createsAtPath, idempotencyHeader, isSafe } from '../../../lib/conformance/resources.js';
import { emptyModel, statefulCommands, type StatefulTransport } from '../../../lib/conformance/stateful.js';
import { emptyStore } from '../../helpers/emptyStore.js';

/**
 * The property-based conformance suite: requests generated from openapi.yaml,
 * sent over HTTP to the app on a fresh database, answers checked against
 * openapi.yaml. See docs/contract.md for the knobs:
 *   CONFORMANCE_RUNS   runs per stateless property (default 1000; the store model gets a tenth
 *                      of sequences on PostgreSQL, a twentieth on PGlite)
 *   CONFORMANCE_SEED   replay a run with this seed
 *   CONFORMANCE_PATH   with the seed, replay one counterexample directly
 *   CONFORMANCE_ONLY   run only the property of this name
 */

// 1000: every declared status is produced by the deterministic steps, so the
// random runs look for wrong answers, not for coverage; this keeps npm test
// under 3 minutes on 2 cores. CONFORMANCE_RUNS=10000 for a deep run.
const runs = Number(process.env['CONFORMANCE_RUNS'] || 1000);
// Sequences of the store model per backend (PGlite answers about half as
// fast), and commands per sequence: enough for pages, replays and cursors to meet.
const modelSequences = { postgres: Math.max(10, Math.round(runs / 10)), embedded: Math.max(5, Math.round(runs / 20)) };
const statefulMaxCommands = 25;
const seed = process.env['CONFORMANCE_SEED']
  ? Number(process.env['CONFORMANCE_SEED'])
  : Date.now() ^ (Math.random() * 0x100000000);
const replayPath = process.env['CONFORMANCE_PATH'] || undefined;
const only = process.env['CONFORMANCE_ONLY'] || undefined;

/**
 * (operation, status) pairs that no request of this suite can produce, each
 * with the reason. Keep this list short: every entry is a part of the
 * contract that nothing checks.
 */
export const coverageExemptions: Record<string, string> = {};

const { document, operations } = loadContract();
const prefix = basePath(document);
const observed = new Set<string>();
let requestsSent = 0;

async function listen(app: TestApp['app']): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

/** A contract client on the app, listening on a free port; what it sends and sees counts toward the report and the coverage test. */
async function contractClient(t: Test, app: TestApp['app']): Promise<ContractClient> {
  const client = new ContractClient(await listen(app), prefix, operations);
  t.teardown(() => {
    client.close();
    requestsSent += client.sent;
    for (const pair of client.observed) observed.add(pair);
  });
  return client;
}

/** A body for an assertion's name: its first 300 characters (a 1 MiB photo printed whole was 3 MB of output). */
function shown(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}... (${text.length} characters)` : text;
}

function describe(request: TestRequest, status: number, text: string): string {
  return `${request.intent}: got ${status} ${shown(text)}`;
}

/** Runs a property and reports fast-check's counterexample and seed through tap. */
async function holds<T>(
  t: Test,
  name: string,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
  numRuns: number,
): Promise<void> {
  if (only && only !== name) return;
  const startedAt = Date.now();
  const details = await fc.check(fc.asyncProperty(arbitrary, predicate), {
    numRuns,
    seed,
    endOnFailure: process.env['CONFORMANCE_NO_SHRINK'] === '1',
    ...(replayPath ? { path: replayPath } : {}),
  });
  t.comment(`${name}: ${details.numRuns} runs in ${Date.now() - startedAt} ms`);
  if (details.failed) {
    // tap prints a failure's extra fields as YAML, so the report keeps its lines.
    const error =
      details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    t.fail(`${name}: property failed (seed ${details.seed}, path ${details.counterexamplePath})`, {
      diagnostic: true,
      error,
      counterexample: JSON.stringify(details.counterexample, null, 1),
      report: fc.defaultReportMessage(details),
      replay: `CONFORMANCE_ONLY='${name}' CONFORMANCE_SEED=${details.seed} CONFORMANCE_PATH='${details.counterexamplePath}' npx tap test/conformance/properties/conformance.test.ts`,
    });
  } else {
    t.pass(`${name}: ${details.numRuns} runs`);
  }
}

async function chooseBackend(t: Test): Promise<Backend> {
  const reason = await postgresUnavailableReason();
  if (reason) {
    t.comment(
      `SKIPPED on PostgreSQL (${reason}); running the conformance suite on the embedded PGlite backend instead`,
    );
    return 'embedded';
  }
  return 'postgres';
}

t.comment(`conformance seed ${seed} (replay with CONFORMANCE_SEED=${seed}); ${runs} runs per property`);

t.test('every answer to generated requests conforms to openapi.yaml', async (t) => {
  const backend = await chooseBackend(t);
  const started = await startTestApp(t, backend);
  const client = await contractClient(t, started.app);
  const context: GeneratorContext = {
    key: started.key,
    bodyLimit: httpLimits.bodyLimitBytes,
  };

  const check = async ({ request, expect }: Case) => {
    const response = await client.send(request);
    if (response.problems.length > 0)
      throw new Error(`${describe(request, response.status, response.text)}\n${response.problems.join('\n')}`);
    if (!expect.includes(response.status))
      throw new Error(`expected ${expect.join(' or ')}; ${describe(request, response.status, response.text)}`);
    if (response.status >= 400) {
      const code = (response.json as { code?: string } | undefined)?.code;
      if (!code)
        throw new Error(`an error without the Error object: ${describe(request, response.status, response.text)}`);
    }
  };

  for (const operation of operations) {
    await holds(t, `${operation.operationId} valid`, validCases(operation, context), check, runs);
    await holds(t, `${operation.operationId} invalid`, invalidCases(operation, context), check, runs);
  }
});

async function apiKeyIdOf(db: TestApp['db']): Promise<number> {
  const { rows } = await db.query<{ id: string }>({ text: "SELECT id FROM api_keys WHERE name = 'test'" });
  return Number(rows[0]?.id);
}

t.test('conditional GETs and Idempotency-Key answers conform to openapi.yaml', async (t) => {
  const backend = await chooseBackend(t);
  const started = await startTestApp(t, backend);
  const client = await contractClient(t, started.app);
  const auth = started.auth.authorization;
  const json = { authorization: auth, 'content-type': 'application/json' };
  const expectConforming = (response: { status: number; problems: string[]; text: string }, status: number) => {
    t.same(response.problems, [], `${status}: no contract problems`);
    t.equal(response.status, status, shown(response.text));
  };

  // Every operation that declares an Idempotency-Key: the replay, the 422 and the 409, by what it declares.
  const context: GeneratorContext = { key: started.key, bodyLimit: httpLimits.bodyLimitBytes };
  const keyed = operations.filter((operation) => !isSafe(operation) && idempotencyHeader(operation));
  t.ok(
    keyed.length > 0,
    `operations with an Idempotency-Key: ${keyed.map((operation) => operation.operationId).join(', ')}`,
  );
  for (const [index, operation] of keyed.entries()) {
    const header = idempotencyHeader(operation)!.name.toLowerCase();
    const key = `conformance-${index}`;
    const sample = await existingResourceRequest(operation, client, context, seed, operations);
    const [body, other] = fc
      .sample(valid(operation.body!.schema), { numRuns: 20, seed })
      .map((value) => JSON.stringify(value))
      .filter((value, at, all) => all.indexOf(value) === at);
    const headers = { ...json, [header]: key };
    const keyedRequest = (sent: string) => ({ ...sample, operationId: operation.operationId, headers, body: sent });
    const success = successStatuses(operation)[0]!;
    const first = await client.send(keyedRequest(body!));
    expectConforming(first, success);
    const replay = await client.send(keyedRequest(body!));
    expectConforming(replay, success);
    t.equal(replay.text, first.text, `${operation.operationId}: the replay answers the first answer`);
    if (operation.responses.has('422')) expectConforming(await client.send(keyedRequest(other!)), 422);
    if (!operation.responses.has('409')) continue;
    if (backend === 'embedded') {
      coverageExemptions[`${operation.operationId} 409`] =
        'the embedded database runs one transaction at a time, so a second request waits instead of seeing the first in flight';
    } else {
      // The key held by a transaction of another connection: the request sees it in flight.
      const apiKeyId = await apiKeyIdOf(started.db);
      await started.db.transaction(async (tx) => {
        await tx.query(
          { text: "SELECT pg_advisory_xact_lock(hashtextextended($1::bigint::text || ':' || $2::text, 0))" },
          [apiKeyId, key],
        );
        expectConforming(await client.send(keyedRequest(body!)), 409);
      });
    }
  }

  // Every safe operation declaring ETag on its success and a 304: what it names made for it, read, then read
  // again with that ETag. Each declared 304 is produced here, whatever the stateful sequences happen to draw.
  const revalidated = operations.filter(
    (operation) =>
      isSafe(operation) &&
      operation.responses.has('304') &&
      successStatuses(operation).some((status) =>
        operation.responses.get(String(status))?.headers.some((header) => header.name === 'etag'),
      ),
  );
  t.ok(revalidated.length > 0, `conditional reads: ${revalidated.map(({ operationId }) => operationId).join(', ')}`);
  for (const operation of revalidated) {
    const read = await existingResourceRequest(operation, client, context, seed, operations);
    const first = await client.send(read);
    t.ok(
      successStatuses(operation).includes(first.status),
      `${operation.operationId}: ${first.status} ${shown(first.text)}`,
    );
    const etag = first.headers.get('etag');
    t.ok(etag, `${operation.operationId}: an ETag on its success`);
    const again = { ...read, headers: { ...read.headers, 'if-none-match': etag ?? '' } };
    expectConforming(await client.send(again), 304);
  }
  // Every PUT that creates what its path names and may say create-only (If-None-Match: *, 412): on one made.
  const createOnly = operations.filter(
    (operation) =>
      createsAtPath(operation) &&
      operation.responses.has('412') &&
      operation.parameters.some(
        (parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === 'if-none-match',
      ),
  );
  for (const operation of createOnly) {
    const made = await existingResourceRequest(operation, client, context, seed, operations);
    const again = { ...made, intent: 'create-only on what exists', headers: { ...json, 'if-none-match': '*' } };
    expectConforming(await client.send(again), 412);
  }
  // Every unsafe operation that declares If-Match and 412 (a replace, a merge patch): on one made, with a tag no
  // representation has. Each such 412 is produced here, whatever the stateful sequences happen to draw.
  const conditionalWrites = operations.filter(
    (operation) =>
      !isSafe(operation) &&
      operation.responses.has('412') &&
      operation.parameters.some(
        (parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === 'if-match',
      ),
  );
  for (const operation of conditionalWrites) {
    const made = await existingResourceRequest(operation, client, context, seed, operations);
    const stale = {
      ...made,
      intent: 'If-Match naming no current tag',
      headers: { ...made.headers, 'if-match': '"no-current-tag"' },
    };
    expectConforming(await client.send(stale), 412);
  }
});

/** The conformance client as the stateful model's transport: Link targets are sent as the operation they list. */
function transportOf(client: ContractClient): StatefulTransport {
  return {
    send: (request, url) => (url === undefined ? client.send(request) : client.sendTo(url, request)),
  };
}

let statefulSequences = 0;
let statefulCommandsRun = 0;

for (const backend of ['postgres', 'embedded'] as const) {
  t.test(`stateful sequences on ${backend} agree with a model of the store, answer by answer`, async (t) => {
    if (only && only !== `stateful model on ${backend}`) return;
    const reason = backend === 'postgres' ? await postgresUnavailableReason() : undefined;
    if (reason) {
      t.comment(`SKIPPED on PostgreSQL (${reason})`);
      return;
    }
    const started = await startTestApp(t, backend);
    const client = await contractClient(t, started.app);
    let sequence = 0;
    const commands = statefulCommands({
      operations,
      authorization: started.auth.authorization,
      basePath: prefix,
      exclusive: true,
      readOnly: false,
      retired: new Set(),
      keyPrefix: `conformance-${backend}-${seed}`,
    });
    await holds(
      t,
      `stateful model on ${backend}`,
      fc.commands(commands, { maxCommands: statefulMaxCommands }),
      async (sequenceCommands) => {
        // Each sequence starts from an empty store: the model is then the whole store.
        await emptyStore(started.db);
        sequence += 1;
        statefulSequences += 1;
        await fc.asyncModelRun(() => ({ model: emptyModel(), real: transportOf(client) }), sequenceCommands);
        statefulCommandsRun += [...sequenceCommands].length;
      },
      modelSequences[backend],
    );
    t.comment(`${sequence} sequences on ${backend}, ${client.sent} requests`);
  });
}

t.test('an unreachable database answers 503 with the Error object', async (t) => {
  // Port 1 on loopback refuses connections: the database is down, the app is not.
  const db = await openDatabase({ url: 'postgres://postgres@127.0.0.1:1/postgres', poolSize: 1 });
  const app = await buildApp(testConfig, { db, logger: false, limits: testLimits });
  t.teardown(async () => {
    await app.close();
    await db.close();
  });
  const client = await contractClient(t, app);
  const context: GeneratorContext = {
    key: 'k'.repeat(40),
    bodyLimit: httpLimits.bodyLimitBytes,
  };
  for (const operation of operations) {
    const [sample] = fc.sample(validCases(operation, context), { numRuns: 1, seed });
    const response = await client.send(sample!.request);
    t.same(response.problems, [], `${operation.operationId}: the 503 conforms`);
    t.equal(response.status, 503, `${operation.operationId}: 503 while the database is down`);
    t.match(response.json, { code: 'service_unavailable', status: 503 });
  }
});

/** Sends a valid request of each operation, `times` times, collecting what the contract client saw. */
async function sendValid(
  t: Test,
  started: TestApp,
  times: number,
  check: (operationId: string, response: { status: number; problems: string[] }) => void,
): Promise<ContractClient> {
  const client = await contractClient(t, started.app);
  const context: GeneratorContext = {
    key: started.key,
    bodyLimit: httpLimits.bodyLimitBytes,
  };
  for (const operation of operations) {
    const samples = fc.sample(validCases(operation, context), { numRuns: times, seed });
    for (const sample of samples) check(operation.operationId, await client.send(sample.request));
  }
  return client;
}

t.test('past the rate limit, every operation answers 429 within the contract', async (t) => {
  const started = await startTestApp(t, await chooseBackend(t), { RATE_LIMIT_MAX: 3, RATE_LIMIT_WINDOW_SECONDS: 60 });
  const statuses: Record<string, number[]> = {};
  await sendValid(t, started, 4, (operationId, response) => {
    t.same(response.problems, [], `${operationId}: ${response.status} conforms`);
    (statuses[operationId] ??= []).push(response.status);
  });
  // The limit is per key across operations: the first three requests pass, all later ones are refused.
  const all = operations.flatMap((operation) => statuses[operation.operationId] ?? []);
  t.ok(
    all.slice(3).every((status) => status === 429),
    `after 3 requests every answer is 429 (got ${all.join(', ')})`,
  );
  for (const operation of operations)
    t.ok(statuses[operation.operationId]?.includes(429), `${operation.operationId} answered 429`);
});

t.test('data outside the contract makes a 500 Error object, never a response that breaks it', async (t) => {
  const started = await startTestApp(t, await chooseBackend(t));
  // The table allows names the contract forbids; a trigger writes one on every
  // insert and a row already holds one, so every operation has an off-contract
  // pet to answer with, and the response validator must stop it.
  await started.db.execScript(`
    INSERT INTO pets (name, category_id) VALUES (E'bad\\001name', 1);
    CREATE FUNCTION pets_break_contract() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN NEW.name := NEW.name || chr(1); RETURN NEW; END $$;
    CREATE TRIGGER pets_break_contract BEFORE INSERT ON pets FOR EACH ROW EXECUTE FUNCTION pets_break_contract();
  `);
  // Here a 500 is the expected answer, so the client's "never a 5xx" rule is set aside; all its other checks hold.
  const besides500 = (problems: string[]) => problems.filter((problem) => !problem.startsWith('server error 500'));
  const statuses: Record<string, number[]> = {};
  const client = await sendValid(t, started, 1, (operationId, response) => {
    t.same(besides500(response.problems), [], `${operationId}: ${response.status} conforms`);
    (statuses[operationId] ??= []).push(response.status);
  });
  t.same(statuses['createPet'], [500], 'createPet: the stored pet breaks the contract');
  const asKey = { authorization: started.auth.authorization };
  const getFirst = await client.send({
    operationId: 'getPet',
    intent: 'the off-contract pet',
    pathParams: { petId: '1' },
    query: [],
    headers: asKey,
  });
  t.same(besides500(getFirst.problems), []);
  t.equal(getFirst.status, 500, 'getPet of the off-contract pet is a 500');
  const list = await client.send({
    operationId: 'listPets',
    intent: 'a page holding the off-contract pet',
    pathParams: {},
    query: [],
    headers: asKey,
  });
  t.same(besides500(list.problems), []);
  t.equal(list.status, 500, 'listPets over the off-contract pet is a 500');
});

t.test('a key without the scope an operation requires gets the 403 the contract declares', async (t) => {
  const started = await startTestApp(t, await chooseBackend(t));
  const client = await contractClient(t, started.app);
  const context: GeneratorContext = {
    key: started.key,
    bodyLimit: httpLimits.bodyLimitBytes,
  };
  const everyScope = [...new Set(operations.flatMap((operation) => operation.scopes))];
  const scoped = operations.filter((operation) => operation.scopes.length > 0);
  t.ok(scoped.length > 0, 'the contract declares scopes');
  for (const operation of scoped) {
    // Every scope but the ones this operation needs: a read-only key for a write, a write-only one for a read.
    const scopes = everyScope.filter((scope) => !operation.scopes.includes(scope));
    const { key } = await issueKey(started.db, `without-${operation.operationId}`, { scopes });
    const request = await existingResourceRequest(operation, client, context, seed, operations);
    const response = await client.send({ ...request, headers: { ...request.headers, authorization: `Bearer ${key}` } });
    t.same(response.problems, [], `${operation.operationId} with [${scopes.join(', ')}]: conforms`);
    t.equal(response.status, 403, `${operation.operationId}: ${shown(response.text)}`);
    t.equal(
      response.headers.get('www-authenticate'),
      `Bearer realm="pets", error="insufficient_scope", scope="${operation.scopes.join(' ')}"`,
    );
  }
});

t.test('stateful steps and the fault hook: each operation answers its success, 500 and 503 on demand', async (t) => {
  const started = await startFaultableApp(t, await chooseBackend(t));
  const client = await contractClient(t, started.app);
  const context: GeneratorContext = {
    key: started.key,
    bodyLimit: httpLimits.bodyLimitBytes,
  };
  const injected = 'fault injected by the conformance suite';
  const steps: Array<{ fault: Error | undefined; expect: (operation: Operation) => number[] }> = [
    // The resource was made from a body drawn from its schema, in any state it admits (a pet made sold): an
    // operation's declared 409 is that state's refusal, reached through storage as a success is.
    {
      fault: undefined,
      expect: (operation) => [...successStatuses(operation), ...(operation.responses.has('409') ? [409] : [])],
    },
    { fault: new Error(injected), expect: () => [500] },
    { fault: new DatabaseUnavailableError(new Error(injected), injected), expect: () => [503] },
  ];
  for (const operation of operations) {
    for (const { fault, expect } of steps) {
      // The resources are made before the fault is set; the request is answered while it holds.
      const request = await existingResourceRequest(operation, client, context, seed, operations);
      started.faults.set(fault);
      const response = await client.send(request).finally(() => {
        started.faults.set(undefined);
      });
      const label = `${operation.operationId} ${fault ? `with ${fault.name}` : 'on an existing resource'}`;
      // A 500 is the expected answer to the plain fault; every other check of the client holds.
      t.same(
        response.problems.filter((problem) => !problem.startsWith('server error 500')),
        [],
        `${label}: ${response.status} conforms`,
      );
      t.ok(expect(operation).includes(response.status), `${label}: ${response.status} (${shown(response.text)})`);
    }
  }
});

const retired = operations.filter((operation) => operation.deprecation?.sunset !== undefined);

t.test(
  'past their sunset (x-sunset), deprecated operations answer 410 within the contract',
  { skip: retired.length === 0 ? 'no operation has a sunset' : false },
  async (t) => {
    const lastSunset = Math.max(...retired.map((operation) => operation.deprecation!.sunset!.getTime()));
    const started = await startTestApp(t, await chooseBackend(t), {}, { now: () => lastSunset });
    const client = await contractClient(t, started.app);
    const context: GeneratorContext = {
      key: started.key,
      bodyLimit: httpLimits.bodyLimitBytes,
    };
    const mismatches: string[] = [];
    for (const operation of retired) {
      const cases = [
        ...fc.sample(validCases(operation, context), { numRuns: 30, seed }),
        ...fc.sample(invalidCases(operation, context), { numRuns: 60, seed }),
      ];
      for (const { request, expect } of cases) {
        const response = await client.send(request);
        // Admission (the key) still comes first; past it, whatever the request holds, the operation is gone.
        const expected = expect.includes(401) ? 401 : 410;
        if (response.problems.length > 0 || response.status !== expected)
          mismatches.push(
            `expected ${expected}; ${describe(request, response.status, response.text)} ${response.problems.join('; ')}`,
          );
      }
    }
    t.same(mismatches, [], 'every answer is the 410 (or the 401) the contract declares');
  },
);

t.test(
  'every (operation, status) pair the spec declares was produced',
  { skip: only ? 'CONFORMANCE_ONLY runs one property' : false },
  async (t) => {
    const declared = operations.flatMap((operation) =>
      [...operation.responses.keys()].map((status) => `${operation.operationId} ${status}`),
    );
    for (const pair of Object.keys(coverageExemptions))
      t.ok(declared.includes(pair), `exemption ${pair} names a declared pair`);
    const missing = declared.filter((pair) => !observed.has(pair) && !(pair in coverageExemptions));
    t.same(missing, [], 'declared pairs never produced');
    const exemptButSeen = Object.keys(coverageExemptions).filter((pair) => observed.has(pair));
    t.same(exemptButSeen, [], 'exempt pairs that are produced after all (remove their exemption)');
    t.comment(`stateful: ${statefulSequences} sequences, ${statefulCommandsRun} commands`);
    t.comment(`conformance suite sent ${requestsSent} requests; pairs produced: ${[...observed].sort().join(', ')}`);
    if (!process.env['CONFORMANCE_RUNS'])
      t.ok(requestsSent >= 6_000, `at least 6,000 generated requests (sent ${requestsSent})`);
  },
);

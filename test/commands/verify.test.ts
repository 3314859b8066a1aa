import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { runCli } from '../../scripts/verify/cli.js';
import type { Findings } from '../../scripts/verify/findings.js';
import { specDifferences } from '../../scripts/verify/specDiff.js';
import { createdPetPrefix, runVerification, type VerifyOptions } from '../../scripts/verify/verify.js';
import { resourceKinds } from '../../lib/conformance/resources.js';
import { loadContract, readLocalSpec } from '../../lib/conformance/spec.js';
import { dereference } from '../../lib/openapi/dereference.js';
import { issueKey } from '../../src/auth/provisioning.js';
import { forEachBackend, startTestApp, type TestApp } from '../helpers/app.js';
import { postgresUnavailableReason } from '../helpers/databases.js';
import { bytesService } from '../helpers/bytesService.js';
import { jsonBodyOf, startRewritingProxy, type Rewrite } from '../helpers/httpProxy.js';

async function listen(app: TestApp['app']): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** A run small enough for a test; retries are not waited out. */
function verify(baseUrl: string, key: string, options: Partial<VerifyOptions> = {}): Promise<Findings> {
  return runVerification({
    baseUrl,
    apiKey: key,
    readOnly: false,
    maxRequests: 60,
    seed: 7,
    wait: () => Promise.resolve(),
    ...options,
  });
}

/** The row count of every table of the database, by name. */
async function rowCounts(db: TestApp['db']): Promise<Record<string, number>> {
  const { rows } = await db.query<{ table_name: string }>({
    text: "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
  });
  const counts: Record<string, number> = {};
  for (const { table_name: table } of rows) {
    const { rows: count } = await db.query<{ n: string }>({ text: `SELECT count(*) AS n FROM "${table}"` });
    counts[table] = Number(count[0]?.n);
  }
  return counts;
}

const io = () => {
  const output: string[] = [];
  return {
    output,
    io: { out: (text: string) => output.push(text), err: (text: string) => output.push(text), env: {} },
  };
};

t.test('against the service itself nothing fails, in write mode and read-only', (t) =>
  forEachBackend(t, async (t, backend) => {
    const { app, db, key } = await startTestApp(t, backend);
    const base = `${await listen(app)}/v1`;

    const written = await verify(base, key);
    t.same(written.failures, [], 'no failure in write mode');
    const seen = [...written.rows.keys()];
    for (const pair of [
      'createPet 201',
      'createPet 400',
      'createPet 401',
      'createPet 422',
      'getPet 200',
      'getPet 304',
      'getPet 404',
      'listPets 200',
      'listPets 304',
      'listPets 400',
    ])
      t.ok(seen.includes(pair), `${pair} was produced and checked`);
    t.ok(written.sent <= 60, `stays within --max-requests (sent ${written.sent})`);
    t.match(written.notes.join('\n'), /stateful: [1-9]\d* sequences of \d+ commands/, 'stateful sequences ran');
    const { rows } = await db.query<{ n: string }>({ text: 'SELECT count(*) AS n FROM pets WHERE name LIKE $1' }, [
      `${createdPetPrefix} %`,
    ]);
    // The pets' makers, by their item path: what else the spec lets a run make is counted apart.
    const { operations } = loadContract();
    const pets = resourceKinds(operations).find((kind) => kind.itemPaths.has('/pets/{petId}'))!;
    const petMakers = pets.makers.map((maker) => maker.operation.operationId);
    const petsCreated = petMakers.reduce((sum, operationId) => sum + (written.createdBy.get(operationId) ?? 0), 0);
    // And those it removed again, where the spec has a DELETE of one: its successes.
    const removed = [...written.rows.values()]
      .filter(
        ({ operationId, status }) =>
          operations.some(
            (operation) =>
              operation.operationId === operationId &&
              operation.method === 'DELETE' &&
              pets.itemPaths.has(operation.path),
          ) &&
          status >= 200 &&
          status < 300,
      )
      .reduce((sum, row) => sum + row.responses, 0);
    t.ok(petsCreated > 0, `write mode created pets (${petsCreated})`);
    t.equal(
      Number(rows[0]?.n) + removed,
      petsCreated,
      'every pet it created carries the prefix (but those it removed), and it counted them all',
    );

    const before = await rowCounts(db);
    const { output, io: cliIo } = io();
    const exit = await runCli(
      ['--base-url', base, '--api-key', key, '--read-only', '--max-requests', '60', '--seed', '3'],
      cliIo,
    );
    const report = output.join('');
    t.equal(exit, 0, `read-only run passes: ${report}`);
    t.same(await rowCounts(db), before, "read-only leaves every table's row count unchanged");
    t.match(report, /read-only: nothing created/);
    t.match(report, /stateful: [1-9]\d* sequences/, 'read-only runs the stateful sequences too, without writes');
    t.match(report, /^createPet\s+400\s+\d+\s+0/m, 'the table has a row per (operation, status)');
  }),
);

t.test("with a read-only key in write mode, the 403 is checked and noted as the key's missing scope", async (t) => {
  const backend = (await postgresUnavailableReason()) === undefined ? 'postgres' : 'embedded';
  const { app, db } = await startTestApp(t, backend);
  const { key } = await issueKey(db, 'verify-read-only', { scopes: ['pets:read'] });
  const origin = await listen(app);
  const findings = await verify(`${origin}/v1`, key);
  t.same(findings.failures, [], 'nothing fails');
  t.ok(findings.rows.has('createPet 403'), 'createPet answered 403, checked against the contract');
  t.match(findings.notes.join('\n'), /the API key lacks the scope pets:write of createPet \(403 insufficient_scope\)/);
  t.ok(findings.rows.has('listPets 200'), 'reads were checked with it');

  const wrongScope: Rewrite = (response) =>
    response.status === 403
      ? {
          ...response,
          headers: {
            ...response.headers,
            'www-authenticate': 'Bearer realm="pets", error="insufficient_scope", scope="pets:read"',
          },
        }
      : response;
  const proxied = await verify(await behindProxy(t, origin, wrongScope), key, { maxRequests: 30 });
  t.ok(
    proxied.failures.some((failure) => failure.check === 'scope challenge'),
    'a challenge that names another scope fails',
  );
});

t.test('the published contract is compared as it reads, $refs resolved', async (t) => {
  const local = readLocalSpec();
  t.same(specDifferences(local, dereference(local)), [], 'moving a definition out of components is no difference');
  const info = { ...(local['info'] as object), version: '9.9.9' };
  t.same(specDifferences(local, { ...local, info }), [
    `/info/version: local "${String((local['info'] as { version: string }).version)}", published "9.9.9"`,
  ]);
});

/** One way at a time to break the contract, and the check that must name it. */
const breakages: Array<{ name: string; check: string; message: RegExp; rewrite: Rewrite }> = [
  {
    name: 'a required header dropped (createPet 201 without Location)',
    check: 'required header missing',
    message: /required header location missing/,
    rewrite: (response) => {
      if (response.status !== 201) return response;
      const { location: _location, ...headers } = response.headers;
      return { ...response, headers };
    },
  },
  {
    name: 'an undeclared status (418 for 404)',
    check: 'undeclared status',
    // Whichever operation verify meets a 404 on first: one that declares it.
    message: /status 418 is not declared for \w+ \(declared: [^)]*\b404\b/,
    rewrite: (response) => (response.status === 404 ? { ...response, status: 418 } : response),
  },
  {
    name: 'a body outside its schema (a pet with a field the schema forbids)',
    check: 'body outside its schema',
    message: /additionalProperties/,
    rewrite: (response, request) => {
      const body = jsonBodyOf(response);
      if (response.status !== 200 || !request.url.startsWith('/v1/pets') || body === undefined) return response;
      const leak = (pet: object) => ({ ...pet, ownerEmail: 'someone@example.com' });
      return { ...response, body: JSON.stringify(Array.isArray(body) ? body.map(leak) : leak(body as object)) };
    },
  },
  {
    name: 'an error body that is not the Error object',
    check: 'not the Error object',
    message: /must answer \{code, message, status\}/,
    rewrite: (response) =>
      response.status >= 400
        ? { ...response, body: JSON.stringify({ error: 'Bad Request', statusCode: response.status }) }
        : response,
  },
  {
    name: 'a wrong content type (text/plain on JSON)',
    check: 'wrong content type',
    message: /Content-Type "text\/plain; charset=utf-8"; openapi.yaml declares application\/json/,
    rewrite: (response, request) =>
      request.url.startsWith('/v1/pets')
        ? { ...response, headers: { ...response.headers, 'content-type': 'text/plain; charset=utf-8' } }
        : response,
  },
  {
    name: 'a Sunset header other than x-sunset says',
    check: 'deprecation headers',
    message: /Sunset "Fri, 06 Dec 2030 00:00:00 GMT", expected Thu, 05 Dec 2030 00:00:00 GMT/,
    rewrite: (response) =>
      response.headers['sunset'] === undefined
        ? response
        : { ...response, headers: { ...response.headers, sunset: 'Fri, 06 Dec 2030 00:00:00 GMT' } },
  },
  {
    name: 'a Link rel="next" that leads back to the first page',
    check: 'paging',
    message: /ids not rising across pages/,
    rewrite: (response, request) => {
      const link = response.headers['link'];
      if (link === undefined || !link.includes('rel="next"')) return response;
      return { ...response, headers: { ...response.headers, link: `<${request.url}>; rel="next"` } };
    },
  },
  {
    name: 'a conditional GET answered in full (If-None-Match ignored)',
    check: 'unexpected status',
    message: /ETag round trip: expected 304, got 200/,
    rewrite: (response, request) =>
      response.status === 304 && request.method === 'GET' ? { ...response, status: 200, body: '[]' } : response,
  },
  {
    name: 'an Idempotency-Key replay without Idempotent-Replayed',
    check: 'Idempotency-Key replay',
    message: /the replay lacks Idempotent-Replayed: true/,
    rewrite: (response) => {
      const { 'idempotent-replayed': _replayed, ...headers } = response.headers;
      return { ...response, headers };
    },
  },
  {
    name: 'another contract published (openapi.json of another version)',
    check: 'published contract',
    message: /\/info\/version: local "[0-9.]+", published "0.0.1"/,
    rewrite: (response, request) => {
      if (!request.url.endsWith('/openapi.json')) return response;
      const spec = jsonBodyOf(response) as { info: { version: string } };
      return { ...response, body: JSON.stringify({ ...spec, info: { ...spec.info, version: '0.0.1' } }) };
    },
  },
  {
    name: 'the contract published through JavaScript numbers (int64 bounds rounded)',
    check: 'published contract',
    message: /maximum: local 9223372036854775807, published 9223372036854776000/,
    rewrite: (response, request) => {
      if (!request.url.endsWith('/openapi.json')) return response;
      return { ...response, body: JSON.stringify(jsonBodyOf(response)) };
    },
  },
];

/**
 * Requests for a run behind a breaking proxy: before its generated cases, where a 404 or a 400 first comes, a
 * run spends about two on each operation (its 401 without a key, its ETag round trip, its maker), so the
 * budget grows with the spec's operations; 40 more are left for the cases.
 */
const breakageBudget = () => 40 + 2 * loadContract().operations.length;

async function behindProxy(t: Test, origin: string, rewrite: Rewrite): Promise<string> {
  const proxy = await startRewritingProxy(origin, rewrite);
  t.teardown(() => proxy.close());
  return `${proxy.url}/v1`;
}

t.test(
  'the proxy that breaks the contract carries a bytes answer as its bytes, and its JSON rewrites pass it by',
  async (t) => {
    const photo = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00, 0xc3]);
    const { origin } = await bytesService(() => ({ contentType: 'image/png', body: photo }), t);
    const unchanged: Rewrite = (response) => response;
    for (const breakage of [{ name: 'none', rewrite: unchanged }, ...breakages]) {
      const answer = await fetch(`${await behindProxy(t, origin, breakage.rewrite)}/pets/1/photo`);
      t.same(new Uint8Array(await answer.arrayBuffer()), photo, `${breakage.name}: the photo, byte for byte`);
    }
  },
);

const sunset = Date.UTC(2030, 11, 5);

// One service for the rest (on PostgreSQL when there is one: an embedded database costs seconds of CPU), with a clock the tests move.
t.test('against a broken deployment', async (t) => {
  let clock = Date.now();
  const backend = (await postgresUnavailableReason()) === undefined ? 'postgres' : 'embedded';
  const { app, key } = await startTestApp(t, backend, {}, { now: () => clock });
  const origin = await listen(app);

  await t.test(
    'behind a proxy that breaks the contract one way at a time, it fails and names the violation',
    async (t) => {
      for (const breakage of breakages) {
        await t.test(breakage.name, async (t) => {
          const findings = await verify(await behindProxy(t, origin, breakage.rewrite), key, {
            maxRequests: breakageBudget(),
          });
          t.notOk(findings.passed, 'the run fails');
          const checks = [...new Set(findings.failures.map((failure) => failure.check))];
          const named = findings.failures.filter((failure) => failure.check === breakage.check);
          t.ok(named.length > 0, `a failure names "${breakage.check}" (got: ${checks.join(', ')})`);
          t.match(named[0]?.message, breakage.message);
          if (breakage.check !== 'published contract')
            t.match(named[0]?.curl, /^curl -sS -i -X [A-Z]+ \$'http:\/\/127\.0\.0\.1:\d+\/v1\//);
        });
      }
    },
  );

  await t.test('a failed run exits 1, prints each failure with its curl line, and writes JUnit', async (t) => {
    const base = await behindProxy(t, origin, breakages[3]!.rewrite);
    const dir = mkdtempSync(join(tmpdir(), 'verify-junit-'));
    t.teardown(() => {
      rmSync(dir, { recursive: true, force: true });
    });
    const junit = join(dir, 'verify.xml');
    const { output, io: cliIo } = io();
    // The budget of the runs above: with a fixed 40, a spec of more operations (the worked examples' tree) left
    // some seeds no request for listPets's 400 after each operation's 401, ETag and maker.
    const argv = ['--base-url', base, '--api-key', key, '--read-only'];
    argv.push('--max-requests', String(breakageBudget()), '--junit', junit);
    const exit = await runCli(argv, cliIo);
    const report = output.join('');
    t.equal(exit, 1);
    t.match(report, /FAIL listPets 400: not the Error object/);
    t.match(report, /curl -sS -i -X GET \S+ -H "authorization: bearer +\$\{API_KEY\}"/i, 'the curl line names the key');
    t.notOk(report.includes(key), 'the key itself appears nowhere in the report');
    const xml = readFileSync(junit, 'utf8');
    t.match(xml, /<testcase classname="contract" name="listPets 400">\s*<failure message="[^"]*not the Error object/);
    t.notOk(xml.includes(key), 'nor in the JUnit file');
    t.equal(await runCli(['--api-key', key], io().io), 2, 'a usage error exits 2');
  });

  await t.test('an id lookup that forgets pets it was asked for fails the model of the store', async (t) => {
    // Schema-valid answers ([] is a valid page): only the model knows the pets must be there.
    const base = await behindProxy(t, origin, (response, request) =>
      request.url.startsWith('/v1/pets?') && /[?&]id=[1-9]/.test(request.url) && response.status === 200
        ? { ...response, body: '[]' }
        : response,
    );
    const findings = await verify(base, key, { maxRequests: 300 });
    const model = findings.failures.filter((failure) => failure.check === 'model of the store');
    t.ok(model.length > 0, `the model names it (failures: ${findings.failures.map((f) => f.check).join(', ')})`);
    t.match(model[0]?.message, /listPets \?id=.*got \[\], the model says \[\{/);
  });

  await t.test('a header the contract does not declare is named in the table, not failed', async (t) => {
    const base = await behindProxy(t, origin, (response) => ({
      ...response,
      headers: { ...response.headers, 'x-powered-by': 'a balancer' },
    }));
    const findings = await verify(base, key, { maxRequests: 20, readOnly: true });
    t.same(findings.failures, []);
    const rows = [...findings.rows.values()];
    t.ok(rows.length > 0 && rows.every((row) => row.undeclaredHeaders.has('x-powered-by')), 'every row names it');
  });

  await t.test('a 503 with Retry-After is waited out and the request sent again', async (t) => {
    let refused = 0;
    const base = await behindProxy(t, origin, (response, request) => {
      if (refused > 0 || !request.url.startsWith('/v1/pets')) return response;
      refused += 1;
      const body = JSON.stringify({ code: 'service_unavailable', message: 'Try later.', status: 503 });
      return {
        status: 503,
        headers: { ...response.headers, 'content-type': 'application/json', 'retry-after': '2' },
        body,
      };
    });
    const waits: number[] = [];
    const findings = await verify(base, key, { maxRequests: 20, wait: async (seconds) => void waits.push(seconds) });
    t.same(waits, [2], 'waited the Retry-After once');
    t.equal(findings.retried, 1);
    t.same(findings.failures, [], 'the answer after the wait is what was checked');
  });

  await t.test("past getPet's sunset it expects the 410, and fails a deployment that still answers", async (t) => {
    clock = sunset;
    const onTime = await verify(`${origin}/v1`, key, { now: () => sunset, maxRequests: 60 });
    t.same(onTime.failures, [], 'a deployment that retired getPet on time passes');
    t.ok(onTime.rows.has('getPet 410'));
    clock = sunset - 1;
    const late = await verify(`${origin}/v1`, key, { now: () => sunset, maxRequests: 60 });
    t.ok(
      late.failures.some((failure) => failure.subject === 'getPet' && failure.check === 'unexpected status'),
      'one that still answers getPet after its sunset fails',
    );
  });
});

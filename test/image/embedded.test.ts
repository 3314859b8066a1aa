import { readFileSync } from 'node:fs';
import t from 'tap';
import {
  bearer,
  checkConformance,
  createVolume,
  firstKeyOf,
  generousRateLimit,
  imageRef,
  podman,
  podmanOk,
  runVerify,
  startContainer,
  waitReady,
} from './harness.js';

/**
 * The image on its embedded default, run as the docs tell an operator to:
 * a read-only root with the data volume and a tmpfs /tmp writable, the API
 * and metrics ports published on 127.0.0.1.
 */

// A check that has not ended by then hangs: the image's own check gives up after 2 s.
const healthcheckWaitMs = 30_000;

t.ok(imageRef, 'PET_STORE_IMAGE names the image under test (npm run test:system -- image sets it)');

t.test('the image on the embedded database, read-only root', async (t) => {
  const volume = await createVolume(t);
  const container = await startContainer(t, { volume, readOnly: true, env: generousRateLimit });
  await waitReady(container);
  const key = await firstKeyOf(container.name);

  t.equal(
    await podmanOk(['inspect', '--format', '{{.HostConfig.ReadonlyRootfs}}', container.name]),
    'true',
    'the root filesystem is read-only',
  );

  await t.test('node is PID 1 and runs as uid 1000', async (t) => {
    const hostPid = Number(await podmanOk(['inspect', '--format', '{{.State.Pid}}', container.name]));
    const status = readFileSync(`/proc/${hostPid}/status`, 'utf8');
    const command = readFileSync(`/proc/${hostPid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    t.same(command, ['node', 'dist/server.js'], "the container's first process is node dist/server.js");
    t.match(status, /^NSpid:\s+\d+\s+1$/m, 'it is PID 1 in the container');
    t.match(status, /^Uid:\s+1000\s+1000\s+1000\s+1000$/m, 'real, effective, saved and file-system uid 1000');
    t.match(status, /^Gid:\s+1000\s+1000\s+1000\s+1000$/m, 'and gid 1000');
  });

  await t.test('the key printed at the first start opens the API; no key, no access', async (t) => {
    const without = await fetch(`${container.baseUrl}/pets`);
    t.equal(without.status, 401, 'without a key: 401');
    await without.arrayBuffer();
    const created = await fetch(`${container.baseUrl}/pets`, {
      method: 'POST',
      headers: bearer(key),
      body: JSON.stringify({ name: 'read-only-root', categoryId: 1 }),
    });
    t.equal(created.status, 201, 'a pet is created: the data volume is writable under a read-only root');
    const pet = (await created.json()) as { id: number };
    const read = await fetch(`${container.baseUrl}/pets/${pet.id}`, { headers: bearer(key) });
    t.equal(read.status, 200, 'and read back');
    await read.arrayBuffer();
  });

  await t.test('metrics are served on the published metrics port, never on the API port', async (t) => {
    const metrics = await fetch(`${container.metricsOrigin}/metrics`);
    t.equal(metrics.status, 200, 'GET /metrics through the published 9464');
    t.match(
      await metrics.text(),
      /^http_server_request_duration_seconds_bucket\{/m,
      'Prometheus text with the request metric',
    );
    const onApi = await fetch(`${container.origin}/metrics`);
    t.not(onApi.status, 200, 'the API port does not serve /metrics');
    await onApi.arrayBuffer();
  });

  await t.test('generated requests conform to openapi.yaml through the published port', (t) =>
    checkConformance(t, container, key),
  );

  await t.test('npm run verify -- --read-only passes against the container', async (t) => {
    const result = await runVerify(container.baseUrl, key);
    t.equal(result.status, 0, 'exit code 0', { output: (result.stdout + result.stderr).slice(-4000) });
  });

  await t.test("the image's HEALTHCHECK passes while the server serves, fails while it is stopped", async (t) => {
    t.match(
      await podmanOk(['inspect', '--format', '{{json .Config.Healthcheck.Test}}', container.name]),
      /\/healthz/,
      'the image declares a HEALTHCHECK on /healthz',
    );
    const healthy = await podman(['healthcheck', 'run', container.name], healthcheckWaitMs);
    t.equal(healthy.status, 0, 'podman healthcheck run: healthy', { output: healthy.stdout + healthy.stderr });

    // SIGSTOP freezes node (PID 1): the container runs, its server answers nothing.
    await podmanOk(['kill', '--signal', 'STOP', container.name]);
    try {
      const stopped = await podman(['healthcheck', 'run', container.name], healthcheckWaitMs);
      t.not(stopped.status, 0, 'podman healthcheck run: unhealthy', { output: stopped.stdout + stopped.stderr });
    } finally {
      await podmanOk(['kill', '--signal', 'CONT', container.name]);
    }
    const again = await podman(['healthcheck', 'run', container.name]);
    t.equal(again.status, 0, 'healthy again once the server runs');
  });
});

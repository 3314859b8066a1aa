import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import {
  bearer,
  createVolume,
  firstKeyOf,
  generousRateLimit,
  imageRef,
  podmanOk,
  runOnce,
  startContainer,
  waitReady,
} from './harness.js';

/**
 * What the image carries: the production dependencies under 70 MB (issue 26;
 * npm ci --omit=dev writes 80 MB, of which the build stage deletes the source
 * maps and type declarations), and the features that load what is left: the
 * docs page's static files and traces over OTLP.
 */

const dependenciesBoundBytes = 70_000_000;
// The container reaches the host's loopback (the OTLP stub below) as 10.0.2.2.
const network = 'slirp4netns:allow_host_loopback=true';
const hostLoopbackFromContainer = '10.0.2.2';

t.ok(imageRef, 'PET_STORE_IMAGE names the image under test (npm run test:system -- image sets it)');

t.test('the production dependencies in the image are under 70 MB', async (t) => {
  const du = await runOnce({
    volume: await createVolume(t),
    command: ['du', '-s', '--bytes', '/app/node_modules'],
  });
  t.equal(du.status, 0, 'du ran in the image', { output: du.stderr });
  const bytes = Number(du.stdout.split('\t')[0]);
  t.ok(bytes > 0 && bytes < dependenciesBoundBytes, `node_modules: ${(bytes / 1e6).toFixed(1)} MB`);

  // The image's own layers: its size less the base's (the FROM line's image).
  const base = 'node:24-bookworm-slim';
  const size = async (ref: string) => Number(await podmanOk(['image', 'inspect', '--format', '{{.Size}}', ref]));
  const [image, baseImage] = await Promise.all([size(imageRef), size(base)]);
  t.comment(
    `image ${(image / 1e6).toFixed(1)} MB, of which ${base} ${(baseImage / 1e6).toFixed(1)} MB ` +
      `and its own layers ${((image - baseImage) / 1e6).toFixed(1)} MB`,
  );
});

t.test('the docs page and its static files are served', async (t) => {
  const container = await startContainer(t, { volume: await createVolume(t), env: generousRateLimit });
  await waitReady(container);
  const page = await fetch(`${container.origin}/docs/`);
  t.equal(page.status, 200, 'GET /docs/');
  const html = await page.text();
  const script = /src="\.?\/?(?:docs\/)?static\/([^"]+\.js)"/.exec(html)?.[1];
  t.ok(script, 'the page loads a script of its own static files');
  const asset = await fetch(`${container.origin}/docs/static/${script}`);
  t.equal(asset.status, 200, `GET /docs/static/${script}`);
  t.ok((await asset.arrayBuffer()).byteLength > 1000, 'with its content');
});

/** An OTLP/HTTP receiver on the host's loopback: the requests it got, by path and content type. */
async function otlpStub(t: Test): Promise<{ port: number; received: Array<{ path: string; type: string }> }> {
  const received: Array<{ path: string; type: string }> = [];
  const server = createServer((request: IncomingMessage, response) => {
    request.resume();
    request.on('end', () => {
      received.push({ path: request.url ?? '', type: request.headers['content-type'] ?? '' });
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  server.listen(0, '0.0.0.0');
  await once(server, 'listening');
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      }),
  );
  return { port: (server.address() as AddressInfo).port, received };
}

t.test('traces leave the container over OTLP/HTTP, configured by the standard variables', async (t) => {
  const stub = await otlpStub(t);
  const container = await startContainer(t, {
    volume: await createVolume(t),
    network,
    env: {
      ...generousRateLimit,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://${hostLoopbackFromContainer}:${stub.port}`,
      OTEL_BSP_SCHEDULE_DELAY: '200',
    },
  });
  await waitReady(container);
  const key = await firstKeyOf(container.name);
  const listed = await fetch(`${container.baseUrl}/pets`, { headers: bearer(key) });
  t.equal(listed.status, 200, 'a traced request is answered');
  await listed.arrayBuffer();
  const deadline = Date.now() + 30_000;
  while (!stub.received.some((entry) => entry.path === '/v1/traces') && Date.now() < deadline) await sleep(200);
  const traces = stub.received.find((entry) => entry.path === '/v1/traces');
  t.ok(traces, `the stub received spans at /v1/traces (${stub.received.length} requests)`);
  t.equal(traces?.type, 'application/x-protobuf', 'as http/protobuf, the default protocol');
});

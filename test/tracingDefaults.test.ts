import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateApiKey } from '../src/auth/keys.js';
import t from 'tap';
import { startServer } from './helpers/server.js';
import { migratedDataDir } from './helpers/databases.js';

// Its own test file, so its own process: the tracing SDK is global to a
// process, and this one is started as an operator would start it, with no
// protocol named.

interface Export {
  contentType: string;
  body: Buffer;
}

/** An OTLP/HTTP collector stand-in: keeps every body posted to /v1/traces. */
async function startCollector() {
  const exports: Export[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces')
        exports.push({ contentType: request.headers['content-type'] ?? '', body: Buffer.concat(chunks) });
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, exports, close: () => server.close() };
}

t.test(
  'with only OTEL_EXPORTER_OTLP_ENDPOINT set, the server exports http/protobuf as the OTEL_* variables say',
  async (t) => {
    const collector = await startCollector();
    t.teardown(collector.close);
    const dir = await migratedDataDir();
    t.teardown(dir.remove);
    const saved = { ...process.env };
    t.teardown(() => {
      process.env = saved;
    });
    process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = collector.url;
    process.env['OTEL_RESOURCE_ATTRIBUTES'] = 'deployment.environment.name=otlp-defaults-test';
    // Only a caller's sampled trace is recorded: proves the sampler variables reach the SDK.
    process.env['OTEL_TRACES_SAMPLER'] = 'parentbased_always_off';
    const key = generateApiKey();
    const server = await startServer({
      DATA_DIR: dir.path,
      PORT: '0',
      METRICS_PORT: 'off',
      LOG_LEVEL: 'error',
      BOOTSTRAP_API_KEY: key,
    });
    let stopped = false;
    t.teardown(() => (stopped ? undefined : server.shutdown('test')));

    const headers = { authorization: `Bearer ${key}` };
    t.equal((await fetch(`${server.address}/v1/pets`, { headers })).status, 200, 'a request with no caller');
    const traceId = crypto.getRandomValues(new Uint8Array(16));
    const traceparent = `00-${Buffer.from(traceId).toString('hex')}-00f067aa0ba902b7-01`;
    const caller = await fetch(`${server.address}/v1/pets/1`, { headers: { ...headers, traceparent } });
    t.ok(caller.status < 500, 'a request continuing a sampled trace');
    await caller.arrayBuffer();
    // The shutdown sends what the batch processor still holds.
    t.equal(await server.shutdown('test'), 0);
    stopped = true;

    t.ok(collector.exports.length > 0, 'the collector received spans at /v1/traces');
    t.ok(
      collector.exports.every((sent) => sent.contentType === 'application/x-protobuf'),
      'as http/protobuf, the default protocol',
    );
    const body = Buffer.concat(collector.exports.map((sent) => sent.body));
    t.ok(body.includes('pet-store-service'), 'the service names itself (service.name)');
    t.ok(body.includes('otlp-defaults-test'), 'with the attributes of OTEL_RESOURCE_ATTRIBUTES');
    t.ok(body.includes('getPet'), 'the sampled request has its span, named by operationId');
    t.ok(body.includes(Buffer.from(traceId)), 'in the caller’s trace');
    t.notOk(body.includes('listPets'), 'the request without a sampled caller has none (OTEL_TRACES_SAMPLER)');
  },
);

import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { buildApp } from '../src/app.js';
import { generateApiKey, toStoredKey } from '../src/auth/keys.js';
import { insertApiKey } from '../src/db/apiKeys.js';
import { startTracingIfRequested, traceExportSettings, tracingRequested } from '../src/observability/tracingSwitch.js';
import { startServer } from './helpers/server.js';
import { StartupError } from '../src/process/startupErrors.js';
import { testConfig, testLimits } from './helpers/app.js';
import { openBackend, postgresUnavailableReason, type Backend } from './helpers/databases.js';

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: { stringValue?: string } }>;
}

/** A minimal OTLP/HTTP receiver for http/json: keeps every span posted to /v1/traces. */
async function startReceiver() {
  const spans: ReceivedSpan[] = [];
  const contentTypes = new Set<string>();
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if (request.url === '/v1/traces') {
        contentTypes.add(request.headers['content-type'] ?? '');
        const payload = JSON.parse(body) as {
          resourceSpans: Array<{ scopeSpans: Array<{ spans: ReceivedSpan[] }> }>;
        };
        for (const resource of payload.resourceSpans)
          for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, spans, contentTypes, close: () => server.close() };
}

const attribute = (span: ReceivedSpan, key: string) =>
  span.attributes.find((entry) => entry.key === key)?.value.stringValue;

t.test('tracing is on only when an exporter is configured', async (t) => {
  t.notOk(tracingRequested({}));
  t.ok(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }));
  t.ok(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }));
  t.ok(tracingRequested({ OTEL_TRACES_EXPORTER: 'console' }));
  t.notOk(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }));
  t.notOk(tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }));
});

t.test(
  'the OTEL_* variables choose the exporter, protocol and propagators; what is not shipped is refused',
  async (t) => {
    t.same(traceExportSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), {
      exporters: ['otlp'],
      protocol: 'http/protobuf',
      propagators: ['tracecontext', 'baggage'],
    });
    t.equal(traceExportSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).protocol, 'http/json');
    t.equal(
      traceExportSettings({
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      }).protocol,
      'http/protobuf',
      'the traces-specific variable wins',
    );
    t.same(traceExportSettings({ OTEL_TRACES_EXPORTER: 'console, otlp' }).exporters, ['console', 'otlp']);
    t.same(traceExportSettings({ OTEL_PROPAGATORS: 'tracecontext' }).propagators, ['tracecontext']);
    t.same(traceExportSettings({ OTEL_PROPAGATORS: 'none' }).propagators, []);
    t.throws(() => traceExportSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), {
      name: 'ConfigError',
      message: /^OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported here: use http\/protobuf, http\/json \(.*4318/,
    });
    t.throws(() => traceExportSettings({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }), {
      message: /^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc /,
    });
    t.throws(() => traceExportSettings({ OTEL_TRACES_EXPORTER: 'zipkin' }), {
      message: /^OTEL_TRACES_EXPORTER=zipkin /,
    });
    t.throws(() => traceExportSettings({ OTEL_PROPAGATORS: 'tracecontext,b3' }), { message: /^OTEL_PROPAGATORS=b3 / });
    t.equal(
      traceExportSettings({ OTEL_TRACES_EXPORTER: 'console', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).protocol,
      'http/protobuf',
      'the protocol matters only to the otlp exporter',
    );
  },
);

t.test('a server asked for gRPC export refuses to start, exit code 2, naming the variable', async (t) => {
  const saved = { ...process.env };
  t.teardown(() => {
    process.env = saved;
  });
  // The server reads the OTEL_* variables from its process's environment, as the SDK does.
  process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = 'http://127.0.0.1:4317';
  process.env['OTEL_EXPORTER_OTLP_PROTOCOL'] = 'grpc';
  const started = startServer({ PORT: '0', METRICS_PORT: 'off', LOG_LEVEL: 'silent', DATA_DIR: '/dev/null/data' });
  await t.rejects(started, { constructor: StartupError, exitCode: 2, message: /OTEL_EXPORTER_OTLP_PROTOCOL=grpc/ });
});

t.test('a request continues the incoming trace, its span is named by operationId, with a SQL child', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  // The standard variables, as an operator sets them; the SDK reads process.env.
  process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = receiver.url;
  process.env['OTEL_EXPORTER_OTLP_PROTOCOL'] = 'http/json';
  process.env['OTEL_SERVICE_NAME'] = 'pets-under-test';
  const tracing = await startTracingIfRequested(process.env);
  if (!tracing) return t.fail('tracing did not start');

  const run = async (t: Test, backend: Backend) => {
    const opened = await openBackend(backend);
    const key = generateApiKey();
    await insertApiKey(opened.db, toStoredKey('test', key));
    const lines: Array<Record<string, unknown>> = [];
    const app = await buildApp(
      { ...testConfig, LOG_LEVEL: 'info' },
      {
        db: tracing.traceDatabase(opened.db),
        httpTracing: tracing.httpPlugin,
        limits: testLimits,
        logStream: { write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) },
      },
    );
    t.teardown(async () => {
      await app.close();
      await opened.close();
    });
    const traceId = [...crypto.getRandomValues(new Uint8Array(16))]
      .map((b) => b.toString(16).padStart(2, '0'))
      .join('');
    const parentId = '00f067aa0ba902b7';
    const response = await app.inject({
      // A key where a client should never put it: in the query.
      url: '/v1/pets?status=available&api_key=secret-in-query',
      headers: { authorization: `Bearer ${key}`, traceparent: `00-${traceId}-${parentId}-01` },
    });
    t.equal(response.statusCode, 200);

    const requestLine = lines.find((line) => line['msg'] === 'request completed');
    t.equal(requestLine?.['traceId'], traceId, 'the request log line carries the trace id');

    let mine: ReceivedSpan[] = [];
    for (const started = Date.now(); Date.now() - started < 60_000;) {
      await tracing.flush();
      mine = receiver.spans.filter((span) => span.traceId === traceId);
      if (mine.some((span) => span.name === 'listPets') && mine.some((span) => attribute(span, 'db.query.text'))) break;
      await sleep(100);
    }
    const root = mine.find((span) => span.name === 'listPets');
    t.ok(root, 'the request span is named by operationId');
    t.equal(root?.parentSpanId, parentId, 'and continues the caller’s span (W3C traceparent)');
    t.equal(root && attribute(root, 'url.path'), '/v1/pets', 'url.path is the path, without the query');
    t.equal(requestLine?.['path'], '/v1/pets', 'as the log line has it');
    t.notMatch(JSON.stringify(mine), /secret-in-query/, 'no span records the query');
    const sql = mine.filter((span) => /from pets/i.test(attribute(span, 'db.query.text') ?? ''));
    t.ok(sql.length >= 1, 'the SQL statement has a span in the same trace');
    const ids = new Set(mine.map((span) => span.spanId));
    t.ok(
      sql.every((span) => span.parentSpanId !== undefined && ids.has(span.parentSpanId)),
      'the SQL span is a child within the request’s trace',
    );
    t.ok(
      [...receiver.contentTypes].every((type) => type.startsWith('application/json')),
      'sent as http/json',
    );
  };

  const reason = await postgresUnavailableReason();
  await t.test('PostgreSQL (instrumentation-pg)', reason ? { skip: reason } : {}, (t) => run(t, 'postgres'));
  await t.test('embedded (the Database wrapper)', (t) => run(t, 'embedded'));
});

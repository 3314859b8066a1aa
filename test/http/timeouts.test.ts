import t from 'tap';
import { loadConfig, ConfigError } from '../../src/config/load.js';
import { httpLimits } from '../../src/http/limits.js';
import { startTestApp } from '../helpers/app.js';

t.test('server timeouts come from the fixed limits and KEEP_ALIVE_TIMEOUT_MS', async (t) => {
  const { app } = await startTestApp(t, 'embedded', { KEEP_ALIVE_TIMEOUT_MS: 65000 });
  t.equal(app.server.requestTimeout, httpLimits.requestTimeoutMs);
  t.equal(app.server.headersTimeout, httpLimits.headersTimeoutMs);
  t.equal(app.server.keepAliveTimeout, 65000);
  t.equal(app.server.timeout, httpLimits.connectionTimeoutMs);
});

t.test('defaults are set deliberately and consistent', async (t) => {
  const config = loadConfig({});
  t.ok(httpLimits.requestTimeoutMs > 0, 'a request cannot take forever');
  t.ok(httpLimits.headersTimeoutMs <= httpLimits.requestTimeoutMs, 'headers arrive within the whole request');
  t.ok(config.KEEP_ALIVE_TIMEOUT_MS > 60000, 'outlives the usual 60 s idle timeout of load balancers');
  t.throws(() => loadConfig({ CORS_ORIGINS: '*' }), ConfigError, 'no wildcard origin');
  t.same(
    loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:5173' }).CORS_ORIGINS,
    'https://a.example, http://localhost:5173',
  );
});

t.test('the body limit is explicit: a larger body is a 413 Error object', async (t) => {
  const { app, auth } = await startTestApp(t, 'embedded');
  const name = 'x'.repeat(httpLimits.bodyLimitBytes);
  const response = await app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: { ...auth, 'content-type': 'application/json' },
    payload: JSON.stringify({ name, categoryId: 1 }),
  });
  t.equal(response.statusCode, 413);
  t.same(response.json(), {
    code: 'payload_too_large',
    message: `The request body is larger than ${httpLimits.bodyLimitBytes} bytes.`,
    status: 413,
  });
});

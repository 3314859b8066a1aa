import t from 'tap';
import { loadConfig, ConfigError } from '../src/config.js';
import { startTestApp } from './helpers/app.js';

t.test('server timeouts come from the configuration', async (t) => {
  const { app } = await startTestApp(t, 'embedded', {
    REQUEST_TIMEOUT_MS: 21000,
    HEADERS_TIMEOUT_MS: 7000,
    KEEP_ALIVE_TIMEOUT_MS: 65000,
    CONNECTION_TIMEOUT_MS: 90000,
  });
  t.equal(app.server.requestTimeout, 21000);
  t.equal(app.server.headersTimeout, 7000);
  t.equal(app.server.keepAliveTimeout, 65000);
  t.equal(app.server.timeout, 90000);
});

t.test('defaults are set deliberately and consistent', async (t) => {
  const config = loadConfig({});
  t.ok(config.REQUEST_TIMEOUT_MS > 0, 'a request cannot take forever by default');
  t.ok(config.HEADERS_TIMEOUT_MS <= config.REQUEST_TIMEOUT_MS);
  t.ok(config.KEEP_ALIVE_TIMEOUT_MS > 60000, 'outlives the usual 60 s idle timeout of load balancers');
  t.throws(() => loadConfig({ REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '6000' }), ConfigError);
  t.throws(() => loadConfig({ CORS_ORIGINS: '*' }), ConfigError, 'no wildcard origin');
  t.same(
    loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:5173' }).CORS_ORIGINS,
    'https://a.example, http://localhost:5173',
  );
});

t.test('the body limit is explicit: a larger body is a 413 Error object', async (t) => {
  const { app, auth } = await startTestApp(t, 'embedded', { BODY_LIMIT_BYTES: 2048 });
  const name = 'x'.repeat(3000);
  const response = await app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: { ...auth, 'content-type': 'application/json' },
    payload: JSON.stringify({ name, categoryId: 1 }),
  });
  t.equal(response.statusCode, 413);
  t.same(response.json(), {
    code: 'payload_too_large',
    message: 'The request body is larger than 2048 bytes.',
    status: 413,
  });
});

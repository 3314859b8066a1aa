import t from 'tap';
import { startTestApp } from '../helpers/app.js';

const allowed = 'https://shop.example.com';
const preflight = (origin: string, extra: Record<string, string> = {}) => ({
  method: 'OPTIONS' as const,
  url: '/v1/pets',
  headers: {
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'authorization, content-type',
    ...extra,
  },
});

t.test('listed origins get CORS, preflight included, without a key', async (t) => {
  const { app, auth } = await startTestApp(t, 'embedded', { CORS_ORIGINS: `${allowed}, https://admin.example.com` });

  const answer = await app.inject(preflight(allowed));
  t.equal(answer.statusCode, 204, 'the preflight is answered, not sent to the auth hook (it has no key)');
  t.equal(answer.headers['access-control-allow-origin'], allowed);
  t.match(answer.headers['access-control-allow-headers'], /Authorization/);
  t.match(answer.headers['access-control-allow-headers'], /Idempotency-Key/);
  t.match(answer.headers['access-control-allow-headers'], /If-None-Match/);
  t.match(answer.headers['access-control-allow-methods'], /POST/);
  t.ok(answer.headers['access-control-max-age']);

  const real = await app.inject({ method: 'GET', url: '/v1/pets', headers: { ...auth, origin: allowed } });
  t.equal(real.statusCode, 200);
  t.equal(real.headers['access-control-allow-origin'], allowed);
  t.match(real.headers['access-control-expose-headers'], /X-Request-Id/);
  t.match(real.headers['access-control-expose-headers'], /Link/);
  t.match(real.headers['access-control-expose-headers'], /ETag/);
  t.match(real.headers['access-control-expose-headers'], /Idempotent-Replayed/);
  t.match(real.headers['vary'], /Origin/);
  const denied = await app.inject({ method: 'GET', url: '/v1/pets', headers: { origin: allowed } });
  t.equal(denied.statusCode, 401, 'CORS does not replace the key');
  t.equal(denied.headers['access-control-allow-origin'], allowed, 'so a browser script can read the 401');

  const other = await app.inject(preflight('https://evil.example.net'));
  t.not(other.statusCode, 204);
  t.equal(other.headers['access-control-allow-origin'], undefined, 'other origins get no CORS headers');
  t.same(
    other.json(),
    { code: 'method_not_allowed', message: other.json().message, status: 405 },
    'and the usual Error object',
  );
  const notPreflight = await app.inject({ method: 'OPTIONS', url: '/v1/pets', headers: { origin: allowed } });
  t.equal(notPreflight.statusCode, 405, 'an OPTIONS that is not a preflight is the usual 405');
  t.equal(notPreflight.headers['allow'], 'GET, POST');
});

t.test('no origin is allowed by default', async (t) => {
  const { app, auth } = await startTestApp(t, 'embedded');
  const answer = await app.inject(preflight(allowed));
  t.equal(answer.statusCode, 405);
  t.equal(answer.headers['access-control-allow-origin'], undefined);
  const real = await app.inject({ method: 'GET', url: '/v1/pets', headers: { ...auth, origin: allowed } });
  t.equal(real.statusCode, 200);
  t.equal(real.headers['access-control-allow-origin'], undefined);
});

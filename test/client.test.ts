import createClient from 'openapi-fetch';
import t from 'tap';
import type { paths } from '../src/generated/api.js';
import { startTestApp } from './helpers/app.js';

// The typed-client example of docs/api.md, run against a real listening server.
t.test('a typed openapi-fetch client works against the service', async (t) => {
  const { app, key } = await startTestApp(t, 'embedded');
  const address = await app.listen({ port: 0, host: '127.0.0.1' });

  const client = createClient<paths>({ baseUrl: `${address}/v1`, headers: { Authorization: `Bearer ${key}` } });
  const created = await client.POST('/pets', { body: { name: 'Rex', categoryId: 3, status: 'available' } });
  t.equal(created.response.status, 201);
  const { data, error, response } = await client.GET('/pets', {
    params: { query: { status: 'available', limit: 20 } },
  });
  t.equal(error, undefined);
  t.equal(response.headers.get('ratelimit-policy') !== null, true);
  t.ok(data?.some((pet) => pet.name === 'Rex'));
});

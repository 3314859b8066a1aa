import type { LightMyRequestResponse } from 'fastify';
import t from 'tap';
import { createPet } from '../src/db/pets.js';
import { forEachBackend, startTestApp } from './helpers/app.js';

// Twelve pets cross the 9 -> 10 boundary, where text order and numeric order part.
await forEachBackend(t, async (t, backend) => {
  const { app, db, auth } = await startTestApp(t, backend);
  for (let i = 0; i < 12; i++) await createPet(db, { name: `pet ${i}`, categoryId: 1, status: i % 2 ? 'sold' : 'available' });

  const seen: number[] = [];
  let url: string | undefined = '/v1/pets?limit=5';
  while (url) {
    const response: LightMyRequestResponse = await app.inject({ url, headers: auth });
    t.equal(response.statusCode, 200);
    seen.push(...response.json<{ id: number }[]>().map((pet) => pet.id));
    url = /^<([^>]+)>; rel="next"$/.exec(String(response.headers['link'] ?? ''))?.[1];
  }
  t.same(seen, Array.from({ length: 12 }, (_, i) => i + 1), 'pages follow ascending numeric ids');

  const sold = await app.inject({ url: '/v1/pets?status=sold&limit=100', headers: auth });
  t.same(sold.json<{ id: number }[]>().map((pet) => pet.id), [2, 4, 6, 8, 10, 12], 'the status filter keeps numeric order');
});

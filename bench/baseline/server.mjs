// The yardstick for `npm run bench`: what a competent hand-written fastify 5 +
// pg service does for the same three operations, with none of our machinery
// (no spec, no glue, no response validation, no key lookup). Plain JS so node
// runs it without a transpile step, as it runs our compiled dist/server.js.
import Fastify from 'fastify';
import pg from 'pg';

const port = Number(process.env.PORT ?? 3001);
const host = process.env.HOST ?? '127.0.0.1';
const databaseUrl = process.env.DATABASE_URL;
const key = process.env.BASELINE_API_KEY;
if (!databaseUrl || !key) {
  process.stderr.write('baseline: DATABASE_URL and BASELINE_API_KEY are required\n');
  process.exit(2);
}
const expectedAuthorization = `Bearer ${key}`;

// Same pool size as our server's default, so neither side wins on connections.
const pool = new pg.Pool({ connectionString: databaseUrl, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });

// The same SQL text as src/db/pets.ts, sent unnamed: what most hand-written routes do.
const columns = 'id, name, category_id, status';
const insertSql = `INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${columns}`;
const selectSql = `SELECT ${columns} FROM pets WHERE id = $1`;
const listSql = `SELECT ${columns} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`;
const listByStatusSql = `SELECT ${columns} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`;

const toPet = (row) => ({
  id: Number(row.id),
  name: row.name,
  categoryId: Number(row.category_id),
  status: row.status,
});

const cursorVersion = 'v1:';
const encodeCursor = (lastId) => Buffer.from(cursorVersion + String(lastId), 'utf8').toString('base64url');
function decodeCursor(cursor) {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const digits = text.startsWith(cursorVersion) ? text.slice(cursorVersion.length) : '';
  return /^[1-9][0-9]{0,15}$/.test(digits) ? Number(digits) : undefined;
}

const petStatus = { type: 'string', enum: ['available', 'pending', 'sold'] };
const id = { type: 'integer', minimum: 1, maximum: 9007199254740991 };
const pet = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'categoryId'],
  properties: { id, name: { type: 'string' }, categoryId: id, status: petStatus },
};
const error = {
  type: 'object',
  properties: { code: { type: 'string' }, message: { type: 'string' }, status: { type: 'integer' } },
};

const app = Fastify({ logger: false });

app.setErrorHandler((err, _request, reply) => {
  const status = err.statusCode && err.statusCode < 500 ? err.statusCode : 500;
  reply.code(status).send({
    code: status === 400 ? 'invalid_request' : 'internal_error',
    message: status < 500 ? err.message : 'Internal server error.',
    status,
  });
});

app.addHook('onRequest', async (request, reply) => {
  if (request.headers.authorization !== expectedAuthorization) {
    reply
      .code(401)
      .header('www-authenticate', 'Bearer realm="pets"')
      .send({ code: 'unauthorized', message: 'Invalid or missing API key.', status: 401 });
    return reply;
  }
});

app.get('/v1/pets', {
  schema: {
    querystring: {
      type: 'object',
      additionalProperties: false,
      properties: {
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
        status: petStatus,
        cursor: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' },
      },
    },
    response: { 200: { type: 'array', items: pet }, 400: error },
  },
  handler: async (request, reply) => {
    const { limit, status, cursor } = request.query;
    const afterId = cursor === undefined ? 0 : decodeCursor(cursor);
    if (afterId === undefined) {
      reply.code(400);
      return { code: 'invalid_request', message: 'bad cursor', status: 400 };
    }
    const { rows } = status
      ? await pool.query(listByStatusSql, [status, afterId, limit + 1])
      : await pool.query(listSql, [afterId, limit + 1]);
    const page = rows.slice(0, limit).map(toPet);
    if (rows.length > limit) {
      const query = new URLSearchParams({ limit: String(limit) });
      if (status) query.set('status', status);
      query.set('cursor', encodeCursor(page[page.length - 1].id));
      reply.header('link', `</v1/pets?${query}>; rel="next"`);
    }
    return page;
  },
});

app.post('/v1/pets', {
  schema: {
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'categoryId'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001F\\u007F-\\u009F]+$' },
        categoryId: id,
        status: petStatus,
      },
    },
    response: { 201: pet, 400: error },
  },
  handler: async (request, reply) => {
    const { name, categoryId, status = 'available' } = request.body;
    const { rows } = await pool.query(insertSql, [name, categoryId, status]);
    const created = toPet(rows[0]);
    reply.code(201).header('location', `/v1/pets/${created.id}`);
    return created;
  },
});

app.get('/v1/pets/:petId', {
  schema: {
    params: { type: 'object', required: ['petId'], properties: { petId: id } },
    response: { 200: pet, 404: error },
  },
  handler: async (request, reply) => {
    const { rows } = await pool.query(selectSql, [request.params.petId]);
    if (!rows[0]) {
      reply.code(404);
      return { code: 'not_found', message: `Pet ${request.params.petId} was not found.`, status: 404 };
    }
    return toPet(rows[0]);
  },
});

const close = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.on('SIGTERM', close);
process.on('SIGINT', close);

await app.listen({ port, host });

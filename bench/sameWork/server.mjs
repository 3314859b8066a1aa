// The same-work yardstick for `npm run bench` (issue 21): a hand-written
// fastify 5 + pg server that does, for listPets, getPet and createPet, the
// per-request work our contract requires, written the way a competent team
// would write it by hand: no spec, no glue, no response validation. Each
// feature can be switched off (SAME_WORK_FEATURES) so the bench can price
// them one at a time over the bare server. Plain JS, run by node as is.
/* global process, Buffer */
import { createHash, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import Fastify, { LogController } from 'fastify';
import pg from 'pg';
import pino from 'pino';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

// ---------------------------------------------------------------- settings

export const allFeatures = ['keyLookup', 'rateLimit', 'requestId', 'etag', 'headers', 'logLine', 'metrics'];

/** SAME_WORK_FEATURES: "all" (default), "none", or a comma list of allFeatures. */
function featuresFrom(text = 'all') {
  if (text === 'all') return new Set(allFeatures);
  const chosen = text === 'none' ? [] : text.split(',').map((name) => name.trim());
  const unknown = chosen.filter((name) => !allFeatures.includes(name));
  if (unknown.length > 0) {
    process.stderr.write(`same-work: unknown SAME_WORK_FEATURES ${unknown.join(', ')}; known: ${allFeatures}\n`);
    process.exit(2);
  }
  return new Set(chosen);
}

const features = featuresFrom(process.env.SAME_WORK_FEATURES);
const on = (feature) => features.has(feature);
const port = Number(process.env.PORT ?? 3002);
const host = process.env.HOST ?? '127.0.0.1';
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  process.stderr.write('same-work: DATABASE_URL is required\n');
  process.exit(2);
}
// Without the key lookup the bare server's check: one key, compared as a constant.
const constantKey = process.env.BASELINE_API_KEY;
if (!on('keyLookup') && !constantKey) {
  process.stderr.write('same-work: BASELINE_API_KEY is required when keyLookup is off\n');
  process.exit(2);
}
const rateLimitMax = Number(process.env.RATE_LIMIT_MAX ?? 300);
const rateLimitWindowSeconds = Number(process.env.RATE_LIMIT_WINDOW_SECONDS ?? 60);
const keyCacheMs = 5000;

// ---------------------------------------------------------------- database

const pool = new pg.Pool({ connectionString: databaseUrl, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
const petColumns = 'id, name, category_id, status';
const sql = {
  insert: `INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${petColumns}`,
  byId: `SELECT ${petColumns} FROM pets WHERE id = $1`,
  page: `SELECT ${petColumns} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`,
  pageOfStatus: `SELECT ${petColumns} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`,
  activeKey: 'SELECT id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
};

function petOf(row) {
  return { id: Number(row.id), name: row.name, categoryId: Number(row.category_id), status: row.status };
}

// ---------------------------------------------------------------- errors

class HttpError extends Error {
  constructor(status, code, message, headers = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

const codeOfStatus = {
  400: 'invalid_request',
  401: 'unauthorized',
  404: 'not_found',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

// ---------------------------------------------------------------- key lookup

const realm = 'Bearer realm="pets"';
const bearer = /^bearer +([A-Za-z0-9._~+/-]+=*) *$/i;

/** Keys found active (or not), by the key sent, for keyCacheMs: most requests neither hash nor query. */
const knownKeys = new Map();

async function lookUpKey(token) {
  const keyHash = createHash('sha256').update(token).digest('hex');
  const { rows } = await pool.query(sql.activeKey, [keyHash]);
  const entry = { keyHash: rows.length > 0 ? keyHash : undefined, until: Date.now() + keyCacheMs };
  if (knownKeys.size >= 10_000) knownKeys.delete(knownKeys.keys().next().value);
  knownKeys.set(token, entry);
  return entry.keyHash;
}

function authorizationHeaders(rawHeaders) {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    if (rawHeaders[index].toLowerCase() === 'authorization') count += 1;
  }
  return count;
}

const invalidKey = () =>
  new HttpError(401, 'unauthorized', 'Invalid or revoked API key.', {
    'www-authenticate': `${realm}, error="invalid_token"`,
  });

function keyOf(request) {
  const header = request.headers.authorization;
  if (!header) throw new HttpError(401, 'unauthorized', 'Missing API key.', { 'www-authenticate': realm });
  // Node keeps the first of several Authorization headers: which key counts would depend on their order.
  if (authorizationHeaders(request.raw.rawHeaders) > 1) {
    throw new HttpError(400, 'invalid_request', 'Send one Authorization header.', {
      'www-authenticate': `${realm}, error="invalid_request"`,
    });
  }
  const token = bearer.exec(header)?.[1];
  if (token !== undefined) return token;
  if (/^bearer\b/i.test(header)) throw invalidKey();
  throw new HttpError(401, 'unauthorized', "Malformed Authorization header; expected 'Bearer <API_KEY>'.", {
    'www-authenticate': realm,
  });
}

/**
 * The caller's key hash (its rate-limit bucket); a 401 when the key is missing
 * or not active. A key never accepted before counts against the address
 * first (countAddress), so guessing keys is limited before it costs a hash
 * and a query.
 */
async function authenticate(request, countAddress) {
  const token = keyOf(request);
  if (!on('keyLookup')) {
    if (token !== constantKey) throw invalidKey();
    return 'constant';
  }
  const known = knownKeys.get(token);
  if (known !== undefined && known.until > Date.now() && known.keyHash !== undefined) return known.keyHash;
  if (known?.keyHash === undefined) countAddress();
  const keyHash = await lookUpKey(token);
  if (keyHash === undefined) throw invalidKey();
  return keyHash;
}

// ---------------------------------------------------------------- rate limit

const rateLimitPolicy = `"default";q=${rateLimitMax};w=${rateLimitWindowSeconds}`;
/** A fixed window per bucket, started by the bucket's first request. */
const windows = new Map();

function countRequest(bucket, reply) {
  const now = Date.now();
  let window = windows.get(bucket);
  if (window === undefined || window.endsAt <= now) {
    window = { count: 0, endsAt: now + rateLimitWindowSeconds * 1000 };
    if (windows.size >= 5000) windows.delete(windows.keys().next().value);
    windows.set(bucket, window);
  }
  window.count += 1;
  const seconds = Math.ceil((window.endsAt - now) / 1000);
  const fields = {
    'ratelimit-policy': rateLimitPolicy,
    ratelimit: `"default";r=${Math.max(0, rateLimitMax - window.count)};t=${seconds}`,
  };
  if (window.count > rateLimitMax) {
    throw new HttpError(429, 'rate_limited', `Rate limit exceeded; retry in ${Math.max(seconds, 1)} seconds.`, {
      ...fields,
      'retry-after': String(Math.max(seconds, 1)),
    });
  }
  reply.headers(fields);
}

// ---------------------------------------------------------------- headers

// getPet is deprecated in favour of listPets?id= (openapi.yaml's x-deprecated-at, x-sunset, x-replacement).
const getPetDeprecation = { deprecation: '@1795219200', sunset: 'Thu, 05 Dec 2030 00:00:00 GMT' };
const getPetLinks = (petId) =>
  `</v1/pets?id=${encodeURIComponent(petId)}>; rel="successor-version", </docs#/pets/getPet>; rel="deprecation"`;

// ---------------------------------------------------------------- ETag

function entityTag(body, link) {
  const hash = createHash('sha256').update(body);
  if (link !== undefined) hash.update(`\n${link}`);
  return `"${hash.digest('base64url').slice(0, 22)}"`;
}

function matches(ifNoneMatch, tag) {
  return ifNoneMatch.split(',').some((candidate) => {
    const value = candidate.trim();
    return value === '*' || value === tag || value === `W/${tag}`;
  });
}

// ---------------------------------------------------------------- metrics

const registry = new Registry();
let histogram;
if (on('metrics')) {
  collectDefaultMetrics({ register: registry });
  histogram = new Histogram({
    name: 'http_server_request_duration_seconds',
    help: 'Request duration by operation, method and status code.',
    labelNames: ['operation', 'method', 'status_code'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
}

// ---------------------------------------------------------------- app

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

const app = Fastify({
  // One line per request, written by the onResponse hook below instead of fastify's two.
  ...(on('logLine')
    ? {
        loggerInstance: pino({ level: 'info' }, pino.destination({ dest: 1, minLength: 4096, sync: false })),
        logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
      }
    : { logger: false }),
  ...(on('requestId')
    ? {
        genReqId: (raw) => {
          const sent = raw.headers['x-request-id'];
          return typeof sent === 'string' && requestIdPattern.test(sent) ? sent : randomUUID();
        },
      }
    : {}),
  exposeHeadRoutes: false,
  bodyLimit: 65536,
});

// Only JSON bodies are part of the contract: text/plain is refused (415), not parsed.
app.removeContentTypeParser(['text/plain']);

app.setErrorHandler((error, request, reply) => {
  if (error instanceof HttpError) {
    reply
      .code(error.status)
      .headers(error.headers)
      .send({ code: error.code, message: error.message, status: error.status });
    return;
  }
  const status = error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  if (status === 500) request.log.error({ err: error }, 'request failed');
  reply.code(status).send({
    code: codeOfStatus[status] ?? (status === 500 ? 'internal_error' : 'invalid_request'),
    message: status === 500 ? 'Internal server error.' : error.message,
    status,
  });
});

app.addHook('onRequest', async (request, reply) => {
  if (on('requestId')) reply.header('x-request-id', request.id);
  if (on('headers')) {
    reply.header('x-content-type-options', 'nosniff').header('cache-control', 'no-store');
    if (request.routeOptions.config.operation === 'getPet') {
      reply.headers(getPetDeprecation).header('link', getPetLinks(request.params.petId));
    }
  }
  let addressCounted = false;
  const countAddress = () => {
    if (!on('rateLimit') || addressCounted) return;
    addressCounted = true;
    countRequest(`ip:${request.ip}`, reply);
  };
  // A request without a valid key counts against its address (once).
  const keyHash = await authenticate(request, countAddress).catch((error) => {
    countAddress();
    throw error;
  });
  if (on('rateLimit')) countRequest(`key:${keyHash}`, reply);
});

if (on('etag')) {
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode !== 200 || typeof payload !== 'string') return payload;
    // The Link is part of what a 200 says: a page that gained a next page has changed.
    const tag = entityTag(payload, reply.getHeader('link'));
    reply.header('etag', tag);
    const ifNoneMatch = request.headers['if-none-match'];
    if (ifNoneMatch === undefined || !matches(ifNoneMatch, tag)) return payload;
    reply.code(304).removeHeader('content-type').removeHeader('content-length');
    return null;
  });
}

if (on('logLine') || on('metrics')) {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions;
    if (on('logLine')) {
      request.log.info(
        {
          method: request.method,
          route: route.url ?? null,
          path: request.url.split('?', 1)[0],
          status: reply.statusCode,
          durationMs: Math.round(reply.elapsedTime * 100) / 100,
        },
        'request completed',
      );
    }
    if (on('metrics')) {
      histogram.observe(
        { operation: route.config.operation ?? 'unknown', method: request.method, status_code: reply.statusCode },
        reply.elapsedTime / 1000,
      );
    }
  });
}

// ---------------------------------------------------------------- routes

// int64: a value outside it is a 400, one inside but beyond the ids assigned a 404.
const int64 = { type: 'integer', minimum: -(2 ** 63), maximum: 2 ** 63 };
const positiveId = { type: 'integer', minimum: 1, maximum: 9007199254740991 };
const petStatus = { type: 'string', enum: ['available', 'pending', 'sold'] };
const petName = { type: 'string', minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001F\\u007F-\\u009F]+$' };
const pet = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'categoryId'],
  properties: { id: positiveId, name: petName, categoryId: positiveId, status: petStatus },
};
const errorBody = {
  type: 'object',
  required: ['code', 'message', 'status'],
  properties: { code: { type: 'string' }, message: { type: 'string' }, status: { type: 'integer' } },
};
const errorResponses = { '4xx': errorBody, '5xx': errorBody };

const cursorPrefix = 'v1:';
const cursorFor = (lastId) => Buffer.from(`${cursorPrefix}${lastId}`).toString('base64url');
function afterIdOf(cursor) {
  const text = Buffer.from(cursor, 'base64url').toString();
  const digits = text.startsWith(cursorPrefix) ? text.slice(cursorPrefix.length) : '';
  if (!/^[1-9][0-9]{0,15}$/.test(digits) || !Number.isSafeInteger(Number(digits))) {
    throw new HttpError(400, 'invalid_request', "query parameter 'cursor' is not a cursor this service issued");
  }
  return Number(digits);
}

app.get('/v1/pets', {
  config: { operation: 'listPets' },
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
    response: { 200: { type: 'array', items: pet }, ...errorResponses },
  },
  handler: async (request, reply) => {
    const { limit, status, cursor } = request.query;
    const afterId = cursor === undefined ? 0 : afterIdOf(cursor);
    // One row more than the page tells whether there is a next one.
    const { rows } = status
      ? await pool.query(sql.pageOfStatus, [status, afterId, limit + 1])
      : await pool.query(sql.page, [afterId, limit + 1]);
    const count = Math.min(rows.length, limit);
    const page = new Array(count);
    for (let index = 0; index < count; index++) page[index] = petOf(rows[index]);
    if (rows.length > limit) {
      const statusPart = status ? `&status=${status}` : '';
      reply.header(
        'link',
        `</v1/pets?limit=${limit}${statusPart}&cursor=${cursorFor(page[count - 1].id)}>; rel="next"`,
      );
    }
    return page;
  },
});

app.post('/v1/pets', {
  config: { operation: 'createPet' },
  schema: {
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'categoryId'],
      properties: { name: petName, categoryId: positiveId, status: petStatus },
    },
    response: { 201: pet, ...errorResponses },
  },
  handler: async (request, reply) => {
    const { name, categoryId, status = 'available' } = request.body;
    const { rows } = await pool.query(sql.insert, [name, categoryId, status]);
    const created = petOf(rows[0]);
    reply.code(201).header('location', `/v1/pets/${created.id}`);
    return created;
  },
});

app.get('/v1/pets/:petId', {
  config: { operation: 'getPet' },
  schema: {
    params: { type: 'object', required: ['petId'], properties: { petId: int64 } },
    response: { 200: pet, ...errorResponses },
  },
  handler: async (request) => {
    const { petId } = request.params;
    // Ids are assigned from 1 to 2^53 - 1: any other int64 names no animal.
    const { rows } = Number.isSafeInteger(petId) && petId >= 1 ? await pool.query(sql.byId, [petId]) : { rows: [] };
    if (rows.length === 0) throw new HttpError(404, 'not_found', `Pet ${petId} was not found.`);
    return petOf(rows[0]);
  },
});

// ---------------------------------------------------------------- lifecycle

const metricsServer =
  on('metrics') &&
  createServer((request, response) => {
    registry.metrics().then((text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text));
  });

async function close() {
  await app.close();
  await pool.end();
  if (metricsServer) metricsServer.close();
  app.log.flush?.();
  process.exit(0);
}
process.on('SIGTERM', close);
process.on('SIGINT', close);

const address = await app.listen({ port, host });
// Said on stderr at once: log lines wait in a 4 KiB buffer.
process.stderr.write(`same-work listening at ${address}\n`);
if (metricsServer) metricsServer.listen(Number(process.env.METRICS_PORT ?? 0), host);

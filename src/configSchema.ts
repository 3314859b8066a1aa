// The configuration's schema: its names, types, defaults and descriptions.
// Nothing loads this file when the service runs: `npm run generate` compiles
// it into src/generated/configValidator.js (ajv standalone code), and
// src/config.ts derives the Config type from it with a type-only import, so
// a start pays neither for typebox nor for compiling the schema.
import { Type } from '@sinclair/typebox';

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const configSchema = Type.Object({
  PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 3000,
    description: 'TCP port to listen on (0 picks a free one).',
  }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'Address to listen on.' }),
  DATABASE_URL: Type.Optional(
    Type.String({
      pattern: '^postgres(ql)?://',
      description: 'PostgreSQL connection string; unset means the embedded database.',
    }),
  ),
  DATABASE_STATEMENTS: Type.Unsafe<'named' | 'unnamed'>({
    type: 'string',
    enum: ['named', 'unnamed'],
    default: 'named',
    description:
      'named: PostgreSQL prepares each statement once per connection. unnamed: no named prepared statement ' +
      'is sent, as a transaction pooler (PgBouncer pool_mode=transaction before 1.21, and others) needs.',
  }),
  DATABASE_DIRECT_URL: Type.Optional(
    Type.String({
      pattern: '^postgres(ql)?://',
      description:
        'A direct (session) connection to the primary, not through a transaction pooler, for migrations ' +
        '(npm run migrate, MIGRATE_ON_START) and npm run apikey; unset means DATABASE_URL.',
    }),
  ),
  DATABASE_READ_URL: Type.Optional(
    Type.String({
      pattern: '^postgres(ql)?://[^,\\s]+(, *postgres(ql)?://[^,\\s]+)*$',
      description:
        'Read replicas of the primary, comma-separated: listPets and getPet read there while they are ' +
        'reachable and at most REPLICA_MAX_LAG_SECONDS behind; everything else uses DATABASE_URL.',
    }),
  ),
  DATABASE_ACQUIRE_TIMEOUT_MS: Type.Integer({
    minimum: 1,
    maximum: 600000,
    default: 5000,
    description:
      'Longest wait for a connection from the pool (including connecting); past it the request gets 503 and a log line.',
  }),
  DATABASE_QUERY_TIMEOUT_MS: Type.Integer({
    minimum: 0,
    maximum: 600000,
    default: 10000,
    description:
      "Longest wait for one statement's answer, including time queued in a pooler (which accepts the " +
      'login at once); past it the request gets 503 and a log line, and the connection is dropped. 0 disables.',
  }),
  REPLICA_MAX_LAG_SECONDS: Type.Number({
    minimum: 0.1,
    maximum: 86400,
    default: 5,
    description:
      'A replica further behind the primary than this is not read from (reads go to the primary); ' +
      'also the longest a listing can miss new pets.',
  }),
  REPLICA_CHECK_INTERVAL_MS: Type.Integer({
    minimum: 100,
    maximum: 600000,
    default: 1000,
    description: 'How often each instance checks its replicas: reachable, still replicas, how far behind.',
  }),
  DATA_DIR: Type.String({ minLength: 1, default: './data', description: 'Folder of the embedded database.' }),
  BOOTSTRAP_API_KEY: Type.Optional(
    Type.String({
      minLength: 20,
      maxLength: 512,
      pattern: '^[A-Za-z0-9._~+/-]+=*$',
      description: 'An API key to accept, stored hashed at start (RFC 6750 token characters, 20 or more).',
    }),
  ),
  LOG_LEVEL: Type.Unsafe<(typeof logLevels)[number]>({
    type: 'string',
    enum: [...logLevels],
    default: 'info',
    description: 'Least severe log level written.',
  }),
  DATABASE_POOL_SIZE: Type.Integer({
    minimum: 1,
    maximum: 200,
    default: 10,
    description: 'Connections in the PostgreSQL pool.',
  }),
  DATABASE_IDLE_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 3600000,
    default: 10000,
    description:
      'A pooled PostgreSQL connection left idle this long is closed, so that its slot of max_connections goes back to the server.',
  }),
  DATABASE_STARTUP_TIMEOUT_MS: Type.Integer({
    minimum: 0,
    maximum: 3600000,
    default: 30000,
    description:
      'At start, how long to keep retrying (with backoff) a PostgreSQL database that cannot be reached or does not exist yet; /healthz answers meanwhile, /readyz 503.',
  }),
  DATA_DIR_MIN_FREE_MB: Type.Integer({
    minimum: 1,
    maximum: 1048576,
    default: 24,
    description:
      'Embedded database: with less free space than this in DATA_DIR, requests and /readyz answer 503 (the database would hang on a full disk; a new WAL segment takes 16 MB).',
  }),
  MIGRATE_ON_START: Type.Boolean({
    default: false,
    description: 'Migrate a PostgreSQL database at start instead of refusing an outdated one.',
  }),
  BODY_LIMIT_BYTES: Type.Integer({
    minimum: 1024,
    maximum: 10485760,
    default: 65536,
    description: 'Largest request body accepted.',
  }),
  API_KEY_CACHE_SECONDS: Type.Number({
    minimum: 0,
    maximum: 300,
    default: 5,
    description:
      'How long a checked API key is trusted without asking the database again; also the longest a ' +
      'revoked key keeps working.',
  }),
  RESPONSE_VALIDATION: Type.Boolean({
    default: true,
    description: 'Validate every response against openapi.yaml before sending it.',
  }),
  NODE_ENV: Type.String({
    default: 'production',
    description:
      'Set to development for human-readable logs (needs the dev dependencies); anything else logs JSON lines.',
  }),
  DRAIN_DELAY_MS: Type.Integer({
    minimum: 0,
    maximum: 600000,
    default: 10000,
    description:
      'On SIGTERM, how long /readyz answers 503 while every other request is still served (with ' +
      'Connection: close) before the listener closes; longer than the load balancer needs to take the ' +
      'instance out (check interval x fall count + check timeout). SIGINT skips it.',
  }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({
    minimum: 0,
    maximum: 600000,
    default: 10000,
    description:
      'On SIGTERM or SIGINT, how long in-flight requests may take to finish before their connections are cut.',
  }),
  REQUEST_TIMEOUT_MS: Type.Integer({
    minimum: 0,
    maximum: 600000,
    default: 30000,
    description:
      'Longest time to receive a whole request, headers and body (0 disables; not advised when exposed directly).',
  }),
  HEADERS_TIMEOUT_MS: Type.Integer({
    minimum: 1,
    maximum: 600000,
    default: 10000,
    description: 'Longest time to receive the request headers; at most REQUEST_TIMEOUT_MS.',
  }),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({
    minimum: 1,
    maximum: 600000,
    default: 72000,
    description:
      'How long an idle keep-alive connection is kept open; keep it above the idle timeout of the ' +
      'load balancer in front (often 60 s).',
  }),
  CONNECTION_TIMEOUT_MS: Type.Integer({
    minimum: 0,
    maximum: 600000,
    default: 120000,
    description: 'A socket with no activity for this long is closed (0 disables).',
  }),
  CORS_ORIGINS: Type.String({
    default: '',
    pattern: '^(https?://[^,\\s/]+(, *https?://[^,\\s/]+)*)?$',
    description:
      'Browser origins allowed to call the API, comma-separated (e.g. https://app.example.com); empty allows none.',
  }),
  TRUST_PROXY: Type.String({
    default: 'false',
    pattern: '^(true|false|[0-9]{1,2}|[0-9a-fA-F.:/, ]+)$',
    description:
      'Whom to trust for X-Forwarded-For when finding the client address (per-address rate limits): ' +
      'false, a hop count, or proxy addresses/CIDRs comma-separated; true is refused (any client could pick ' +
      'its address).',
  }),
  READINESS_MAX_AGE_MS: Type.Integer({
    minimum: 0,
    maximum: 60000,
    default: 1000,
    description:
      'How old the database probe behind /readyz may be; concurrent and repeated /readyz requests share one ' +
      'probe, so probes cost at most one query per interval (0: probe on every request).',
  }),
  RATE_LIMIT_MAX: Type.Integer({
    minimum: 1,
    maximum: 1000000,
    default: 300,
    description: 'Requests allowed per API key (or per client address without a valid key) in each window.',
  }),
  RATE_LIMIT_WINDOW_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 86400,
    default: 60,
    description: 'Length of the rate-limit window in seconds.',
  }),
  IDEMPOTENCY_TTL_SECONDS: Type.Integer({
    minimum: 60,
    maximum: 2592000,
    default: 86400,
    description:
      'How long the answer to a createPet request with an Idempotency-Key is kept and replayed; older keys ' +
      'are forgotten (and deleted by a purge that runs every IDEMPOTENCY_TTL_SECONDS / 24, at most hourly).',
  }),
  RATE_LIMIT_REDIS_TIMEOUT_MS: Type.Integer({
    minimum: 1,
    maximum: 10000,
    default: 50,
    description:
      'Longest wait for Redis on a request; after repeated failures the limit is counted in each process for a while (see docs/operations.md).',
  }),
  REDIS_URL: Type.Optional(
    Type.String({
      pattern: '^rediss?://',
      description: 'Redis holding the rate-limit counters, shared by all instances; unset keeps them in each process.',
    }),
  ),
  METRICS_PORT: Type.String({
    default: '9464',
    pattern: '^(off|[0-9]{1,5})$',
    description:
      'Port of the separate Prometheus listener serving /metrics (never the API port; 0 picks a free one); off disables it.',
  }),
  METRICS_HOST: Type.String({
    minLength: 1,
    default: '127.0.0.1',
    description: 'Address of the metrics listener; keep it private (the scraper reaches it, clients must not).',
  }),
  LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS: Type.Integer({
    minimum: 0,
    maximum: 60000,
    default: 1000,
    description: 'Answer API requests 503 while the mean event-loop delay exceeds this (0 disables).',
  }),
  LOAD_SHEDDING_MAX_EVENT_LOOP_UTILIZATION: Type.Number({
    minimum: 0,
    maximum: 1,
    default: 0,
    description:
      'Answer API requests 503 while the event loop is busy more than this share of the last sample interval (0 disables).',
  }),
  LOAD_SHEDDING_MAX_HEAP_USED_BYTES: Type.Integer({
    minimum: 0,
    default: 0,
    description: 'Answer API requests 503 while the V8 heap in use exceeds this many bytes (0 disables).',
  }),
  LOAD_SHEDDING_SAMPLE_INTERVAL_MS: Type.Integer({
    minimum: 10,
    maximum: 60000,
    default: 1000,
    description: 'How often event-loop delay, utilisation and heap are sampled for load shedding.',
  }),
  LOAD_SHEDDING_RETRY_AFTER_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 3600,
    default: 5,
    description: 'Retry-After of a shed request.',
  }),
});

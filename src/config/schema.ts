// The configuration's schema: its names, types, defaults and descriptions.
// Only what differs between deployments is a setting; each description says
// when an operator sets it. Fixed values are named constants in the code
// that uses them (e.g. src/http/limits.ts), each with the reason for its value.
// docs/configuration.md is generated from these descriptions.
// Nothing loads this file when the service runs: `npm run generate` compiles
// it into src/generated/configValidator.js (ajv standalone code), and
// src/config/load.ts derives the Config type from it with a type-only import, so
// a start pays neither for typebox nor for compiling the schema.
import { Type } from '@sinclair/typebox';

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const configSchema = Type.Object({
  PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 3000,
    description: 'TCP port to listen on, the one the container or load balancer sends to (0 picks a free one).',
  }),
  HOST: Type.String({
    minLength: 1,
    default: '127.0.0.1',
    description: 'Address to listen on: 0.0.0.0 in a container, so that clients outside it reach the service.',
  }),
  DATABASE_URL: Type.Optional(
    Type.String({
      pattern: '^postgres(ql)?://',
      description:
        'PostgreSQL connection string; unset means the embedded database, which serves one process only, ' +
        'so set it for any deployment of more than one instance.',
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
        '(npm run migrate, MIGRATE_ON_START), npm run apikey and hearing API key changes (LISTEN); unset ' +
        'means DATABASE_URL. Set it when DATABASE_URL goes through a transaction pooler.',
    }),
  ),
  DATABASE_READ_URL: Type.Optional(
    Type.String({
      pattern: '^postgres(ql)?://[^,\\s]+(, *postgres(ql)?://[^,\\s]+)*$',
      description:
        'Read replicas of the primary, comma-separated, to take reads off it: listPets and getPet read ' +
        'there while they are reachable and at most REPLICA_MAX_LAG_SECONDS behind; everything else uses ' +
        'DATABASE_URL.',
    }),
  ),
  REPLICA_MAX_LAG_SECONDS: Type.Number({
    minimum: 0.1,
    maximum: 86400,
    default: 5,
    description:
      'A replica further behind the primary than this is not read from (reads go to the primary); ' +
      'also the longest a listing can miss new pets: set it to the staleness your clients accept.',
  }),
  DATA_DIR: Type.String({
    minLength: 1,
    default: './data',
    description: 'Folder of the embedded database (created if missing): set it to a persistent volume.',
  }),
  BOOTSTRAP_API_KEY: Type.Optional(
    Type.String({
      minLength: 32,
      maxLength: 512,
      pattern: '^[A-Za-z0-9._~+/-]+=*$',
      description:
        'An API key to accept, stored hashed at start: for a deployment or test that needs a known key ' +
        'before anyone runs npm run apikey. Make one with npm run apikey -- new. Any value (after pets_, ' +
        'checksum aside) must be 32 or more RFC 6750 token characters costing at least 10^30 guesses to a ' +
        'zxcvbn estimator and to the rules an attacker tries first (repeated blocks, sequences, keyboard ' +
        'walks, words or phrases, words with counters or years, case pairs, texts taken in turn fail), and one ' +
        'starting pets_ of the checksummed shape a whole key whose checksum matches, or the start stops.',
    }),
  ),
  LOG_LEVEL: Type.Unsafe<(typeof logLevels)[number]>({
    type: 'string',
    enum: [...logLevels],
    default: 'info',
    description: 'Least severe log level written: debug or trace while diagnosing, warn to cut the volume.',
  }),
  DATABASE_POOL_SIZE: Type.Integer({
    minimum: 1,
    maximum: 200,
    default: 10,
    description:
      "Connections in the PostgreSQL pool: instances x this must fit the server's max_connections " +
      '(sizing rule: docs/operations.md, Pool sizing).',
  }),
  DATABASE_STARTUP_TIMEOUT_MS: Type.Integer({
    minimum: 0,
    maximum: 3600000,
    default: 30000,
    description:
      'At start, how long to keep retrying (with backoff) a PostgreSQL database that cannot be reached or ' +
      'does not exist yet; /healthz answers meanwhile, /readyz 503. Set it to the longest your database may ' +
      'take to come up (started alongside, failing over).',
  }),
  MIGRATE_ON_START: Type.Boolean({
    default: false,
    description:
      'Migrate a PostgreSQL database at start instead of refusing an outdated one: for a deployment ' +
      'without a migration step of its own (npm run migrate) before the new version starts.',
  }),
  API_KEY_CACHE_SECONDS: Type.Number({
    minimum: 0,
    maximum: 300,
    default: 5,
    description:
      'How long a checked API key is trusted without asking the database again. A revocation acts at ' +
      'once where the database announces it (LISTEN on DATABASE_DIRECT_URL, else DATABASE_URL); this is ' +
      'the longest a revoked key keeps working where it is not heard (through a transaction pooler ' +
      'without DATABASE_DIRECT_URL, or while the listening connection is down). 0: every request asks.',
  }),
  LOAD_SHED_EVENT_LOOP_DELAY_MS: Type.Integer({
    minimum: 0,
    maximum: 600000,
    default: 1000,
    description:
      'Mean event-loop delay past which API requests get 503 with Retry-After and /readyz 503 (at 1 s ' +
      'every request already waits a second before any work starts). Raise it where clients wait longer ' +
      'rather than retry elsewhere (one instance, no balancer), or on a machine whose delays come from its ' +
      'neighbours; 0 turns load shedding off.',
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
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({
    minimum: 1,
    maximum: 600000,
    default: 72000,
    description:
      'How long an idle keep-alive connection is kept open; keep it above the idle timeout of the ' +
      'load balancer in front (often 60 s).',
  }),
  CORS_ORIGINS: Type.String({
    default: '',
    pattern: '^(https?://[^,\\s/]+(, *https?://[^,\\s/]+)*)?$',
    description:
      'Browser origins allowed to call the API, comma-separated (e.g. https://app.example.com): set it when ' +
      'a web page on another origin calls the API; empty allows none.',
  }),
  TRUST_PROXY: Type.String({
    default: 'false',
    pattern: '^(true|false|[0-9a-fA-F.:/, ]+)$',
    description:
      'Whom to trust for X-Forwarded-For when finding the client address (per-address rate limits): ' +
      "false, or the proxies' addresses/CIDRs comma-separated (e.g. 10.0.0.0/8); true and a hop count are " +
      'refused (any client that connects directly could pick its address).',
  }),
  RATE_LIMIT_MAX: Type.Integer({
    minimum: 1,
    maximum: 1000000,
    default: 300,
    description:
      'Requests allowed per API key (or per client address without a valid key) in each window: the quota ' +
      'your clients are promised.',
  }),
  RATE_LIMIT_WINDOW_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 86400,
    default: 60,
    description: 'Length of the rate-limit window in seconds (with RATE_LIMIT_MAX, the quota).',
  }),
  IDEMPOTENCY_TTL_SECONDS: Type.Integer({
    minimum: 60,
    maximum: 2592000,
    default: 86400,
    description:
      'How long the answer to a request with an Idempotency-Key is kept and replayed; older keys ' +
      'are forgotten (and deleted by a purge that runs every IDEMPOTENCY_TTL_SECONDS / 24, at most hourly).',
  }),
  REDIS_URL: Type.Optional(
    Type.String({
      pattern: '^rediss?://',
      description:
        'Redis holding the rate-limit counters, shared by all instances; unset keeps them in each process, ' +
        'so set it when more than one instance serves and the quota must hold per client, not per instance.',
    }),
  ),
  METRICS_PORT: Type.String({
    default: '9464',
    pattern: '^(off|[0-9]{1,5})$',
    description:
      'Port of the separate Prometheus listener serving /metrics (never the API port; 0 picks a free one), ' +
      'the one your scraper is told; off when nothing scrapes.',
  }),
  METRICS_HOST: Type.String({
    minLength: 1,
    default: '127.0.0.1',
    description:
      'Address of the metrics listener: 0.0.0.0 in a container so that the scraper reaches it; keep it ' +
      'private (clients must not).',
  }),
});

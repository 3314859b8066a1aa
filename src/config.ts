import { Type, type Static } from '@sinclair/typebox';
import { Ajv } from 'ajv';

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const configSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'TCP port to listen on (0 picks a free one).' }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'Address to listen on.' }),
  DATABASE_URL: Type.Optional(
    Type.String({ pattern: '^postgres(ql)?://', description: 'PostgreSQL connection string; unset means the embedded database.' }),
  ),
  DATA_DIR: Type.String({ minLength: 1, default: './data', description: 'Folder of the embedded database.' }),
  BOOTSTRAP_API_KEY: Type.Optional(
    Type.String({
      minLength: 20,
      maxLength: 512,
      pattern: '^[A-Za-z0-9._~+/-]+=*$',
      description: 'An API key to accept, stored hashed at start (RFC 6750 token characters, 20 or more).',
    }),
  ),
  LOG_LEVEL: Type.Unsafe<(typeof logLevels)[number]>({ type: 'string', enum: [...logLevels], default: 'info', description: 'Least severe log level written.' }),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10, description: 'Connections in the PostgreSQL pool.' }),
  MIGRATE_ON_START: Type.Boolean({ default: false, description: 'Migrate a PostgreSQL database at start instead of refusing an outdated one.' }),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, maximum: 10485760, default: 65536, description: 'Largest request body accepted.' }),
  API_KEY_CACHE_SECONDS: Type.Number({ minimum: 0, maximum: 300, default: 5, description: 'How long a checked API key is trusted without asking the database again; also the longest a revoked key keeps working.' }),
  RESPONSE_VALIDATION: Type.Boolean({ default: true, description: 'Validate every response against openapi.yaml before sending it.' }),
  NODE_ENV: Type.String({ default: 'production', description: 'Set to development for human-readable logs (needs the dev dependencies); anything else logs JSON lines.' }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 600000, default: 10000, description: 'On SIGTERM or SIGINT, how long in-flight requests may take to finish before their connections are cut.' }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 600000, default: 30000, description: 'Longest time to receive a whole request, headers and body (0 disables; not advised when exposed directly).' }),
  HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 1, maximum: 600000, default: 10000, description: 'Longest time to receive the request headers; at most REQUEST_TIMEOUT_MS.' }),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 1, maximum: 600000, default: 72000, description: 'How long an idle keep-alive connection is kept open; keep it above the idle timeout of the load balancer in front (often 60 s).' }),
  CONNECTION_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 600000, default: 120000, description: 'A socket with no activity for this long is closed (0 disables).' }),
  CORS_ORIGINS: Type.String({ default: '', pattern: '^(https?://[^,\\s/]+(, *https?://[^,\\s/]+)*)?$', description: 'Browser origins allowed to call the API, comma-separated (e.g. https://app.example.com); empty allows none.' }),
  TRUST_PROXY: Type.String({ default: 'false', pattern: '^(true|false|[0-9]{1,2}|[0-9a-fA-F.:/, ]+)$', description: 'Whom to trust for X-Forwarded-For when finding the client address (per-address rate limits): false, true, a hop count, or proxy addresses/CIDRs comma-separated.' }),
  RATE_LIMIT_MAX: Type.Integer({ minimum: 1, maximum: 1000000, default: 300, description: 'Requests allowed per API key (or per client address without a valid key) in each window.' }),
  RATE_LIMIT_WINDOW_SECONDS: Type.Integer({ minimum: 1, maximum: 86400, default: 60, description: 'Length of the rate-limit window in seconds.' }),
  REDIS_URL: Type.Optional(
    Type.String({ pattern: '^rediss?://', description: 'Redis holding the rate-limit counters, shared by all instances; unset keeps them in each process.' }),
  ),
});

export type Config = Static<typeof configSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true, strict: true });
const validateConfig = ajv.compile<Config>(configSchema);

/**
 * Reads the configuration from an environment once. Empty strings count as
 * unset. A bad value throws a ConfigError naming the variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const candidate: Record<string, unknown> = {};
  for (const name of Object.keys(configSchema.properties)) {
    const value = env[name];
    if (value !== undefined && value !== '') candidate[name] = value;
  }
  if (!validateConfig(candidate)) {
    const problems = (validateConfig.errors ?? []).map((error) => {
      const name = error.instancePath.slice(1) || String(error.params['missingProperty'] ?? '');
      const shown = name === 'BOOTSTRAP_API_KEY' || name === 'DATABASE_URL' || name === 'REDIS_URL' ? '' : ` (got ${JSON.stringify(env[name])})`;
      const rule = error.keyword === 'enum' ? `must be one of ${logLevels.join(', ')}` : error.message;
      return `${name} ${rule}${shown}`;
    });
    throw new ConfigError(`Invalid configuration: ${[...new Set(problems)].join('; ')}`);
  }
  const config = candidate as Config;
  if (config.REQUEST_TIMEOUT_MS > 0 && config.HEADERS_TIMEOUT_MS > config.REQUEST_TIMEOUT_MS) {
    throw new ConfigError(
      `Invalid configuration: HEADERS_TIMEOUT_MS (${config.HEADERS_TIMEOUT_MS}) must not exceed REQUEST_TIMEOUT_MS (${config.REQUEST_TIMEOUT_MS})`,
    );
  }
  return config;
}

export const configVariables = configSchema.properties;

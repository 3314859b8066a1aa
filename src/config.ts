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
      const shown = name === 'BOOTSTRAP_API_KEY' || name === 'DATABASE_URL' ? '' : ` (got ${JSON.stringify(env[name])})`;
      const rule = error.keyword === 'enum' ? `must be one of ${logLevels.join(', ')}` : error.message;
      return `${name} ${rule}${shown}`;
    });
    throw new ConfigError(`Invalid configuration: ${[...new Set(problems)].join('; ')}`);
  }
  return candidate as Config;
}

export const configVariables = configSchema.properties;

import type { Static } from '@sinclair/typebox';
import type { configSchema } from './schema.js';
import { configNames, validate as validateConfig } from '../generated/configValidator.js';
import { trustProxyProblem } from './trustProxy.js';

export type Config = Static<typeof configSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Reads the configuration from an environment once. Empty strings count as
 * unset. A bad value throws a ConfigError naming the variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const candidate: Record<string, unknown> = {};
  for (const name of configNames) {
    const value = env[name];
    if (value !== undefined && value !== '') candidate[name] = value;
  }
  if (!validateConfig(candidate)) {
    const problems = (validateConfig.errors ?? []).map((error) => {
      const name = error.instancePath.slice(1) || String(error.params['missingProperty'] ?? '');
      // URLs may hold passwords, the bootstrap key is one.
      const shown = /_URL$|_KEY$/.test(name) ? '' : ` (got ${JSON.stringify(env[name])})`;
      const allowed = error.keyword === 'enum' ? (error.params['allowedValues'] as unknown[] | undefined) : undefined;
      const rule = allowed ? `must be one of ${allowed.join(', ')}` : error.message;
      return `${name} ${rule}${shown}`;
    });
    throw new ConfigError(`Invalid configuration: ${[...new Set(problems)].join('; ')}`);
  }
  // validateConfig checked it, filled in the defaults and coerced the types.
  const config = candidate as Config;
  const trustProblem = trustProxyProblem(config.TRUST_PROXY);
  if (trustProblem !== undefined) throw new ConfigError(`Invalid configuration: ${trustProblem}`);
  assertConsistent(config);
  return config;
}

/** The port of the metrics listener, or undefined when METRICS_PORT=off. */
export function metricsPortOf(config: Pick<Config, 'METRICS_PORT'>): number | undefined {
  return config.METRICS_PORT === 'off' ? undefined : Number(config.METRICS_PORT);
}

function assertConsistent(config: Config): void {
  if (config.METRICS_PORT !== 'off' && Number(config.METRICS_PORT) > 65535) {
    throw new ConfigError(
      `Invalid configuration: METRICS_PORT must be off or a port up to 65535 (got ${config.METRICS_PORT})`,
    );
  }
  for (const name of ['DATABASE_DIRECT_URL', 'DATABASE_READ_URL'] as const) {
    if (config[name] && !config.DATABASE_URL) {
      throw new ConfigError(
        `Invalid configuration: ${name} needs DATABASE_URL (the embedded database has no ${name}).`,
      );
    }
  }
  if (config.MIGRATE_ON_START && config.DATABASE_URL && config.DATABASE_STATEMENTS === 'unnamed') {
    if (!config.DATABASE_DIRECT_URL) throw migrationsNeedDirectUrl('MIGRATE_ON_START=true');
  }
}

export function migrationsNeedDirectUrl(what: string): ConfigError {
  return new ConfigError(
    `Invalid configuration: ${what} with DATABASE_STATEMENTS=unnamed (a transaction pooler) needs ` +
      'DATABASE_DIRECT_URL: migrations hold a lock for their whole transaction and run longer than ' +
      'pooler and query timeouts allow, so they connect to the primary directly.',
  );
}

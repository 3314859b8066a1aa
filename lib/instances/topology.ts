import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { startHaproxy, type HaproxyServer } from './haproxy.js';
import { startPgBouncer, type PgBouncerServer } from './pgbouncer.js';
import { startPostgres, startReplica, type PostgresServer } from './postgres.js';
import { ownedFolder, runChecked, startTimeOf } from './processes.js';
import { startRedis, type RedisServer } from './redis.js';
import { builtServer, repoRoot, startService, type ServiceInstance } from './service.js';

/**
 * The scale-out topology on one machine: a PostgreSQL primary and one
 * streaming replica, PgBouncer (transaction pooling) in front of the
 * primary, Redis, three service instances and HAProxy in front of them.
 * `npm run topology:up` and the topology tests both start it from here.
 */

export const topologyDatabase = 'pets';
/** deploy/haproxy.cfg names three servers. */
export const instanceCount = 3;

export interface TopologyOptions {
  /** Every instance's files go under it; a new temporary folder by default. */
  folder?: string;
  /** Keep running after this Node.js process exits. */
  persistent?: boolean;
  /** Settings for every service instance, on top of (and overriding) the topology's. */
  serviceEnv?: Record<string, string>;
  /** PgBouncer's pool mode; deploy/pgbouncer.ini's (transaction) by default. */
  poolMode?: 'session' | 'transaction';
  /** Progress lines ("starting the replica..."). */
  log?: (line: string) => void;
}

export interface ProcessRecord {
  name: string;
  pid: number;
  port: number;
  /** The signal that stops it cleanly. */
  stopSignal: NodeJS.Signals;
  logFile: string;
  /** From /proc: tells this process from a later one that got the same pid. */
  startTime: number | undefined;
}

export interface Topology {
  readonly folder: string;
  readonly primary: PostgresServer;
  readonly replica: PostgresServer;
  readonly pgbouncer: PgBouncerServer;
  readonly redis: RedisServer;
  readonly services: ServiceInstance[];
  readonly haproxy: HaproxyServer;
  /** http://127.0.0.1:<HAProxy port>/v1 */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** The settings each instance started with (without PORT and HOST). */
  readonly serviceEnv: Readonly<Record<string, string>>;
  /** Every process, in start order, for a state file. */
  processes(): ProcessRecord[];
  /** Stops everything, the balancer first and the primary last. */
  stop(): Promise<void>;
  /** stop(), then deletes the folder with every data directory and log. */
  remove(): Promise<void>;
}

/** The path part of openapi.yaml's first server URL ("/v1"). */
export function apiBasePath(): string {
  const document = parse(readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8')) as { servers?: Array<{ url: string }> };
  const url = document.servers?.[0]?.url;
  if (!url) throw new Error('openapi.yaml has no servers[0].url');
  return new URL(url, 'http://localhost').pathname.replace(/\/$/, '');
}

/** The API key the instances store at start (BOOTSTRAP_API_KEY); URL-safe token characters. */
export function newApiKey(): string {
  return `pets_${randomBytes(30).toString('base64url')}`;
}

export async function startTopology(options: TopologyOptions = {}): Promise<Topology> {
  const log = options.log ?? (() => undefined);
  if (!existsSync(builtServer) || !existsSync(join(repoRoot, 'dist', 'cli', 'migrate.js'))) {
    throw new Error(`${builtServer} or dist/cli/migrate.js is missing: run npm run build first`);
  }
  const folder = options.folder ?? ownedFolder('pets-topology-', undefined, tmpdir());
  mkdirSync(folder, { recursive: true });
  const remove = async () => {
    await stopAll();
    rmSync(folder, { recursive: true, force: true });
  };
  const common = { parent: folder, persistent: options.persistent === true };
  const started: Array<{ stop(): Promise<void> }> = [];
  const stopAll = async () => {
    for (const item of [...started].reverse()) await item.stop().catch(() => undefined);
  };

  try {
    log('starting the PostgreSQL primary');
    const primary = await startPostgres(common);
    started.push(primary);
    await primary.query(`CREATE DATABASE ${topologyDatabase}`);

    log('starting the streaming replica and Redis');
    const [replica, redis] = await Promise.all([startReplica(primary, common), startRedis(common)]);
    started.push(replica, redis);

    log('migrating through the direct connection (node dist/cli/migrate.js)');
    const directUrl = primary.url(topologyDatabase);
    runChecked(process.execPath, [join(repoRoot, 'dist', 'cli', 'migrate.js')], {
      cwd: repoRoot,
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        DATABASE_URL: directUrl,
        DATABASE_DIRECT_URL: directUrl,
        LOG_LEVEL: 'warn',
      },
    });

    log(`starting PgBouncer (${options.poolMode ?? 'transaction'} pooling)`);
    const pgbouncer = await startPgBouncer({
      ...common,
      backend: { port: primary.port },
      database: topologyDatabase,
      ...(options.poolMode ? { poolMode: options.poolMode } : {}),
    });
    started.push(pgbouncer);

    const apiKey = newApiKey();
    const serviceEnv: Record<string, string> = {
      DATABASE_URL: pgbouncer.url,
      DATABASE_STATEMENTS: 'unnamed',
      DATABASE_DIRECT_URL: directUrl,
      DATABASE_READ_URL: replica.url(topologyDatabase),
      DATABASE_POOL_SIZE: '10',
      REDIS_URL: redis.url,
      BOOTSTRAP_API_KEY: apiKey,
      // Longer than HAProxy needs to mark a draining instance down (inter 1s x fall 2 + timeout check 1s).
      DRAIN_DELAY_MS: '4000',
      SHUTDOWN_TIMEOUT_MS: '10000',
      // HAProxy connects from 127.0.0.1 and sends X-Forwarded-For.
      TRUST_PROXY: '127.0.0.1',
      RATE_LIMIT_MAX: '100000',
      LOG_LEVEL: 'info',
      ...options.serviceEnv,
    };

    log(`starting ${instanceCount} service instances (node dist/server.js)`);
    const services: ServiceInstance[] = [];
    // The first one stores the bootstrap key alone; the others find it there.
    services.push(await startService({ ...common, name: 'app1', env: serviceEnv }));
    started.push(services[0]!);
    const others = await Promise.all(
      Array.from({ length: instanceCount - 1 }, (_, index) =>
        startService({ ...common, name: `app${index + 2}`, env: serviceEnv }),
      ),
    );
    services.push(...others);
    started.push(...others);

    log('starting HAProxy (deploy/haproxy.cfg)');
    const haproxy = await startHaproxy({ ...common, servers: services.map((service) => `127.0.0.1:${service.port}`) });
    started.push(haproxy);
    await haproxy.waitForAllUp();

    const records = (): ProcessRecord[] => {
      const entries: Array<Omit<ProcessRecord, 'startTime'>> = [
        {
          name: 'postgres-primary',
          pid: primary.pid,
          port: primary.port,
          stopSignal: 'SIGINT',
          logFile: primary.logFile,
        },
        {
          name: 'postgres-replica',
          pid: replica.pid,
          port: replica.port,
          stopSignal: 'SIGINT',
          logFile: replica.logFile,
        },
        { name: 'redis', pid: redis.pid, port: redis.port, stopSignal: 'SIGTERM', logFile: redis.logFile },
        {
          name: 'pgbouncer',
          pid: pgbouncer.pid,
          port: pgbouncer.port,
          stopSignal: 'SIGINT',
          logFile: pgbouncer.logFile,
        },
        ...services.map((service) => ({
          name: service.name,
          pid: service.pid,
          port: service.port,
          stopSignal: 'SIGTERM' as const,
          logFile: service.logFile,
        })),
        { name: 'haproxy', pid: haproxy.pid, port: haproxy.port, stopSignal: 'SIGUSR1', logFile: haproxy.logFile },
      ];
      return entries.map((entry) => ({ ...entry, startTime: startTimeOf(entry.pid) }));
    };

    return {
      folder,
      primary,
      replica,
      pgbouncer,
      redis,
      services,
      haproxy,
      baseUrl: `${haproxy.origin}${apiBasePath()}`,
      apiKey,
      serviceEnv,
      processes: records,
      stop: stopAll,
      remove,
    };
  } catch (error) {
    // The error carries the last lines of the failing log; a folder made here goes.
    if (options.folder) await stopAll();
    else await remove();
    throw error;
  }
}

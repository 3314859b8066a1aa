import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { startFailoverCluster, type FailoverCluster } from './autoFailover.js';
import { startHaproxy, type HaproxyServer } from './haproxy.js';
import { startPgBouncer, type PgBouncerServer } from './pgbouncer.js';
import { startPostgres, startReplica, type PostgresServer } from './postgres.js';
import { startPostgresRouter, type PostgresRouter } from './postgresRouter.js';
import { ownedFolder, runChecked, startTimeOf } from './processes.js';
import { startRedis, type RedisServer } from './redis.js';
import { repoRoot } from '../repoRoot.js';
import { builtServer, startService, type ServiceInstance } from './service.js';

/**
 * The scale-out topology on one machine: PostgreSQL, Redis, three service
 * instances and HAProxy in front of them. The database tier is either one
 * primary with one streaming replica and PgBouncer (transaction pooling) in
 * front of the primary, or (database: failover) a pg_auto_failover formation
 * of three synchronous nodes, each with PgBouncer beside it, behind HAProxy
 * routes to the node that takes writes and to the standbys.
 * `npm run topology -- up` and the topology tests both start it from here.
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
  /**
   * single (the default for tests): one primary and one streaming replica.
   * failover: a pg_auto_failover formation (monitor, three synchronous data
   * nodes) behind HAProxy routes to the node that takes writes and to the
   * standbys (lib/instances/autoFailover.ts, deploy/haproxy-postgres.cfg).
   */
  database?: 'single' | 'failover';
  /**
   * The built tree whose dist/server.js the instances run and whose
   * dist/cli/migrate.js migrates the database: this checkout by default, a
   * previous release's (lib/releases/build.ts) for an upgrade drill.
   */
  build?: string;
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
  /** The single primary; the failover topology has none fixed (it throws: use cluster). */
  readonly primary: PostgresServer;
  /** The single streaming replica; the failover topology has none fixed (it throws: use cluster). */
  readonly replica: PostgresServer;
  /** The pg_auto_failover formation and its routes (database: failover). */
  readonly cluster: FailoverCluster | undefined;
  readonly postgresRouter: PostgresRouter | undefined;
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
export function apiBasePath(root = repoRoot): string {
  const document = parse(readFileSync(join(root, 'openapi.yaml'), 'utf8')) as { servers?: Array<{ url: string }> };
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
  const build = options.build ?? repoRoot;
  const server = options.build ? join(build, 'dist', 'server.js') : builtServer;
  if (!existsSync(server) || !existsSync(join(build, 'dist', 'cli', 'migrate.js'))) {
    throw new Error(`${server} or dist/cli/migrate.js is missing: run npm run build first`);
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
    const poolMode = options.poolMode;
    const tier =
      options.database === 'failover'
        ? await failoverTier(common, log, poolMode)
        : await singleTier(common, log, poolMode);
    started.push(...tier.started);
    const redis = await tier.redis;
    started.push(redis);

    log('migrating through the direct connection (node dist/cli/migrate.js)');
    const directUrl = tier.directUrl;
    runChecked(process.execPath, [join(build, 'dist', 'cli', 'migrate.js')], {
      cwd: build,
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        DATABASE_URL: directUrl,
        DATABASE_DIRECT_URL: directUrl,
        LOG_LEVEL: 'warn',
      },
    });

    const apiKey = newApiKey();
    const serviceEnv: Record<string, string> = {
      DATABASE_URL: tier.pooledUrl,
      DATABASE_STATEMENTS: 'unnamed',
      DATABASE_DIRECT_URL: directUrl,
      DATABASE_READ_URL: tier.readUrl,
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
    // Stopped together, as topology down stops them: each drains for DRAIN_DELAY_MS first.
    started.push({
      stop: async () => {
        await Promise.all(services.map((service) => service.stop()));
      },
    });
    // The first one stores the bootstrap key alone; the others find it there.
    // Ready within a minute: a second or two on a quiet machine, far more with two topologies starting at once.
    const instance = { ...common, env: serviceEnv, entry: server, readyTimeoutMs: 60_000 };
    services.push(await startService({ ...instance, name: 'app1' }));
    const others = await Promise.all(
      Array.from({ length: instanceCount - 1 }, (_, index) => startService({ ...instance, name: `app${index + 2}` })),
    );
    services.push(...others);

    log('starting HAProxy (deploy/haproxy.cfg)');
    const haproxy = await startHaproxy({ ...common, servers: services.map((service) => `127.0.0.1:${service.port}`) });
    started.push(haproxy);
    await haproxy.waitForAllUp();

    const records = (): ProcessRecord[] => {
      const entries: Array<Omit<ProcessRecord, 'startTime'>> = [
        ...tier.records(),
        { name: 'redis', pid: redis.pid, port: redis.port, stopSignal: 'SIGTERM', logFile: redis.logFile },
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

    const fixed = (what: 'primary' | 'replica', server: PostgresServer | undefined): PostgresServer => {
      if (!server) throw new Error(`the failover topology has no fixed ${what}: use topology.cluster`);
      return server;
    };
    return {
      folder,
      get primary() {
        return fixed('primary', tier.primary);
      },
      get replica() {
        return fixed('replica', tier.replica);
      },
      cluster: tier.cluster,
      postgresRouter: tier.router,
      get pgbouncer() {
        if (!tier.pgbouncer) throw new Error('the failover topology has one PgBouncer per node: use topology.cluster');
        return tier.pgbouncer;
      },
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

type Record_ = Omit<ProcessRecord, 'startTime'>;

/** The database processes of a topology, and where the service finds them. */
interface DatabaseTier {
  started: Array<{ stop(): Promise<void> }>;
  redis: Promise<RedisServer>;
  /** DATABASE_URL: through PgBouncer to the primary. */
  pooledUrl: string;
  /** DATABASE_DIRECT_URL (migrations): the primary without a pooler. */
  directUrl: string;
  readUrl: string;
  pgbouncer?: PgBouncerServer;
  primary?: PostgresServer;
  replica?: PostgresServer;
  cluster?: FailoverCluster;
  router?: PostgresRouter;
  records(): Record_[];
}

type Common = { parent: string; persistent: boolean };

type PoolMode = TopologyOptions['poolMode'];

async function singleTier(common: Common, log: (line: string) => void, poolMode: PoolMode): Promise<DatabaseTier> {
  log('starting the PostgreSQL primary');
  const primary = await startPostgres(common);
  const started: Array<{ stop(): Promise<void> }> = [primary];
  try {
    await primary.query(`CREATE DATABASE ${topologyDatabase}`);
    log('starting the streaming replica and Redis');
    const redis = startRedis(common);
    const replica = await startReplica(primary, common);
    started.push(replica);
    log(`starting PgBouncer (${poolMode ?? 'transaction'} pooling)`);
    const pgbouncer = await startPgBouncer({
      ...common,
      backend: { port: primary.port },
      database: topologyDatabase,
      ...(poolMode ? { poolMode } : {}),
    });
    started.push(pgbouncer);
    return {
      started,
      redis,
      pooledUrl: pgbouncer.url,
      directUrl: primary.url(topologyDatabase),
      readUrl: replica.url(topologyDatabase),
      primary,
      replica,
      pgbouncer,
      records: () => [
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
        {
          name: 'pgbouncer',
          pid: pgbouncer.pid,
          port: pgbouncer.port,
          stopSignal: 'SIGINT',
          logFile: pgbouncer.logFile,
        },
      ],
    };
  } catch (error) {
    for (const item of started.reverse()) await item.stop().catch(() => undefined);
    throw error;
  }
}

async function failoverTier(common: Common, log: (line: string) => void, poolMode: PoolMode): Promise<DatabaseTier> {
  const redis = startRedis(common);
  log('starting the pg_auto_failover monitor and three data nodes');
  const cluster = await startFailoverCluster({ ...common, database: topologyDatabase, log }).catch(
    async (error: unknown) => {
      // Redis started beside it: a formation that failed leaves nothing running.
      await redis.then((server) => server.stop()).catch(() => undefined);
      throw error;
    },
  );
  const started: Array<{ stop(): Promise<void> }> = [cluster];
  try {
    log(`starting PgBouncer beside each data node (${poolMode ?? 'transaction'} pooling)`);
    const poolers = await Promise.all(
      cluster.nodes.map((node) =>
        startPgBouncer({
          ...common,
          backend: { port: node.port },
          database: topologyDatabase,
          ...(poolMode ? { poolMode } : {}),
        }),
      ),
    );
    started.push(...poolers);
    log('starting HAProxy for PostgreSQL (deploy/haproxy-postgres.cfg)');
    const router = await startPostgresRouter({
      ...common,
      nodes: cluster.nodes.map((node, index) => ({ postgresPort: node.port, poolerPort: poolers[index]!.port })),
    });
    started.push(router);
    await router.waitForPrimary();
    return {
      started,
      redis,
      pooledUrl: router.primaryUrl(topologyDatabase),
      directUrl: router.directUrl(topologyDatabase),
      readUrl: router.standbysUrl(topologyDatabase),
      cluster,
      router,
      records: () => [
        // SIGINT: pg_autoctl's fast shutdown, its postmaster included.
        ...cluster.processes().map((record) => ({ ...record, stopSignal: 'SIGINT' as const })),
        ...poolers.map((pooler, index) => ({
          name: `pgbouncer-node${index + 1}`,
          pid: pooler.pid,
          port: pooler.port,
          stopSignal: 'SIGINT' as const,
          logFile: pooler.logFile,
        })),
        {
          name: 'haproxy-postgres',
          pid: router.haproxy.pid,
          port: router.primaryPort,
          stopSignal: 'SIGUSR1' as const,
          logFile: router.haproxy.logFile,
        },
      ],
    };
  } catch (error) {
    for (const item of started.reverse()) await item.stop().catch(() => undefined);
    await redis.then((server) => server.stop()).catch(() => undefined);
    throw error;
  }
}

/**
 * Private instances for scripts, the bench and tests (never imported by
 * src/): PostgreSQL primaries and streaming replicas, Redis, PgBouncer,
 * HAProxy, Prometheus, Alertmanager, the blackbox exporter, the built service, and the whole topology. Every process is
 * started on 127.0.0.1 and a free port, waited for until it really answers,
 * and stopped by its pid. The exports below are its API; docs/deploying.md
 * ("The local topology") says how the tests and scripts/topology/ use it.
 */
export { freePort, accepts, loopback } from './network.js';
export {
  isAlive,
  lastLines,
  ownedFolder,
  processTree,
  serviceAccount,
  socketFolder,
  startTimeOf,
  stopPid,
  waitUntil,
} from './processes.js';
export { ensurePackages, missingPackages } from './packages.js';
export {
  startAlertmanager,
  alertmanagerBin,
  amtoolBin,
  type AlertmanagerServer,
  type AlertmanagerAlert,
} from './alertmanager.js';
export { startBlackboxExporter, blackboxBin, type BlackboxServer } from './blackbox.js';
export {
  startPostgres,
  startReplica,
  waitForReplay,
  postgresUrl,
  type PostgresServer,
  type PostgresOptions,
} from './postgres.js';
export { startRedis, type RedisServer, type RedisOptions } from './redis.js';
export {
  startPgBouncer,
  renderPgBouncerIni,
  deployPgBouncerIni,
  type PgBouncerServer,
  type PgBouncerOptions,
} from './pgbouncer.js';
export {
  startHaproxy,
  haproxyCommand,
  haproxyEnvironment,
  parseServerStats,
  type HaproxyServer,
  type HaproxyOptions,
  type ServerStatus,
} from './haproxy.js';
export {
  startFailoverCluster,
  nodeStates,
  type FailoverCluster,
  type FailoverNode,
  type NodeState,
} from './autoFailover.js';
export {
  startPrometheus,
  prometheusBin,
  promtoolBin,
  type PrometheusServer,
  type PrometheusOptions,
  type PrometheusAlert,
} from './prometheus.js';
export { startPostgresRouter, type PostgresRouter } from './postgresRouter.js';
export { startService, builtServer, type ServiceInstance, type ServiceOptions } from './service.js';
export {
  startTopology,
  apiBasePath,
  newApiKey,
  instanceCount,
  topologyDatabase,
  type Topology,
  type TopologyOptions,
  type ProcessRecord,
} from './topology.js';

import { fileURLToPath } from 'node:url';
import { startHaproxy, type HaproxyServer } from './haproxy.js';
import { freePort, loopback } from './network.js';
import { waitUntil } from './processes.js';

/**
 * A private HAProxy running deploy/haproxy-postgres.cfg as it is: a port
 * that reaches the PgBouncer of whichever data node takes writes now, one
 * that reaches that node's PostgreSQL directly, one that reaches the
 * standbys. Each node is checked in PostgreSQL's own protocol (the file says how).
 */

export const deployPostgresHaproxyCfg = fileURLToPath(new URL('../../deploy/haproxy-postgres.cfg', import.meta.url));

export const primaryBackend = 'postgres_primary';
export const standbysBackend = 'postgres_standbys';

export interface PostgresRouter {
  readonly haproxy: HaproxyServer;
  /** Reaches the PgBouncer of the node that takes writes now. */
  readonly primaryPort: number;
  /** Reaches the PostgreSQL of the node that takes writes now (migrations). */
  readonly directPort: number;
  /** Reaches a standby (round robin). */
  readonly standbysPort: number;
  primaryUrl(database: string): string;
  directUrl(database: string): string;
  standbysUrl(database: string): string;
  /**
   * The node names the balancer may send writes to now (one, or none during
   * a failover): UP, or UP and going down (after one failed check, which
   * HAProxy still routes to; so is every server before its first check).
   */
  writableNodes(): Promise<string[]>;
  /** The node names the standbys route may send reads to now (UP, as for writableNodes). */
  standbyNodes(): Promise<string[]>;
  /** Waits until the balancer sends writes to exactly one node, and returns its name. */
  waitForPrimary(timeoutMs?: number): Promise<string>;
  stop(): Promise<void>;
}

export async function startPostgresRouter(options: {
  /** Each data node in order (PG_NODE_n, PG_POOLER_n, PG_CHECK_PORT_n): its PostgreSQL's port and its PgBouncer's. */
  nodes: Array<{ postgresPort: number; poolerPort: number }>;
  parent?: string;
  persistent?: boolean;
}): Promise<PostgresRouter> {
  const primaryPort = await freePort();
  const directPort = await freePort();
  const standbysPort = await freePort();
  const haproxy = await startHaproxy({
    servers: [],
    configFile: deployPostgresHaproxyCfg,
    port: primaryPort,
    environment: {
      PG_PRIMARY_LISTEN: `${loopback}:${primaryPort}`,
      PG_DIRECT_LISTEN: `${loopback}:${directPort}`,
      PG_STANDBYS_LISTEN: `${loopback}:${standbysPort}`,
      ...Object.fromEntries(
        options.nodes.flatMap((node, index) => [
          [`PG_NODE_${index + 1}`, `${loopback}:${node.postgresPort}`],
          [`PG_POOLER_${index + 1}`, `${loopback}:${node.poolerPort}`],
          [`PG_CHECK_PORT_${index + 1}`, String(node.postgresPort)],
        ]),
      ),
    },
    ...(options.parent ? { parent: options.parent } : {}),
    ...(options.persistent ? { persistent: true } : {}),
  });
  const url = (port: number, database: string) => `postgres://postgres@${loopback}:${port}/${database}`;
  const upNodes = async (backend: string) =>
    (await haproxy.servers(backend)).filter((server) => server.status.startsWith('UP')).map((server) => server.name);
  const writableNodes = () => upNodes(primaryBackend);
  return {
    haproxy,
    primaryPort,
    directPort,
    standbysPort,
    primaryUrl: (database) => url(primaryPort, database),
    directUrl: (database) => url(directPort, database),
    standbysUrl: (database) => url(standbysPort, database),
    writableNodes,
    standbyNodes: () => upNodes(standbysBackend),
    waitForPrimary: (timeoutMs = 30_000) =>
      waitUntil({ what: 'the balancer routing writes to one node', timeoutMs, logFile: haproxy.logFile }, async () => {
        const up = await writableNodes();
        if (up.length !== 1) throw new Error(`nodes taking writes: ${up.join(', ') || 'none'}`);
        return up[0];
      }),
    stop: () => haproxy.stop(),
  };
}

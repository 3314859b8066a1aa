import pg from 'pg';
import { loopback, nodeStates, processTree, type NodeState, type ProcessRecord } from '../../lib/instances/index.js';
import { stillRunning, type TopologyState } from './state.js';

/**
 * Each database node of a running topology with its role now (primary: the
 * one that takes writes) and its pids (the database and its manager, every
 * process of the node), so that a drill outside the tests can kill the
 * primary itself.
 */

/** A record's pid and every process under it, while it still runs. */
function pidsOf(record: ProcessRecord): number[] {
  return stillRunning(record) ? processTree(record.pid) : [];
}

async function singleRole(port: number): Promise<string> {
  const client = new pg.Client({
    connectionString: `postgres://postgres@${loopback}:${port}/postgres`,
    connectionTimeoutMillis: 2_000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ recovering: boolean; read_only: string }>(
      "SELECT pg_is_in_recovery() AS recovering, current_setting('transaction_read_only') AS read_only",
    );
    const row = rows[0];
    return row?.recovering ? 'standby' : row?.read_only === 'on' ? 'read-only' : 'primary';
  } catch {
    return 'unreachable';
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function databaseNodes(state: TopologyState): Promise<NodeState[]> {
  if (state.monitorPort !== undefined) {
    const nodes = state.processes
      .filter((record) => /^pg-node\d+$/.test(record.name))
      .map((record) => ({ name: record.name.replace(/^pg-/, ''), port: record.port, pids: () => pidsOf(record) }));
    return nodeStates(state.monitorPort, nodes);
  }
  const single = state.processes.filter((record) => record.name.startsWith('postgres-'));
  return Promise.all(
    single.map(async (record) => {
      const role = await singleRole(record.port);
      return {
        name: record.name,
        port: record.port,
        role,
        reportedState: role,
        assignedState: role,
        pids: pidsOf(record),
      };
    }),
  );
}

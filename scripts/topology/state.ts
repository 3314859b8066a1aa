import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, startTimeOf, type ProcessRecord } from '../../lib/instances/index.js';
import { repoRoot } from '../../lib/repoRoot.js';

/**
 * What `npm run topology -- up` started, kept in .run/topology/state.json (the
 * repo ignores .run/), so that `down` stops exactly those processes, by pid,
 * and `status` shows them. TOPOLOGY_DIR moves the folder (the tests use it).
 */

export const topologyFolder = process.env['TOPOLOGY_DIR'] || join(repoRoot, '.run', 'topology');
const stateFile = join(topologyFolder, 'state.json');

export interface TopologyState {
  startedAt: string;
  folder: string;
  baseUrl: string;
  apiKey: string;
  /** The HAProxy admin socket, for the balancer's view of the instances. */
  haproxySocket: string;
  processes: ProcessRecord[];
  /** The pg_auto_failover monitor's port when the database tier is the failover one. */
  monitorPort?: number;
  /** The admin socket of the failover tier's HAProxy for PostgreSQL. */
  postgresRouterSocket?: string;
}

export function readState(): TopologyState | undefined {
  if (!existsSync(stateFile)) return undefined;
  return JSON.parse(readFileSync(stateFile, 'utf8')) as TopologyState;
}

export function writeState(state: TopologyState): void {
  mkdirSync(topologyFolder, { recursive: true });
  writeFileSync(stateFile, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

/** True while the recorded process runs: same pid and same start time (not a later process that reused the pid). */
export function stillRunning(record: ProcessRecord): boolean {
  return isAlive(record.pid) && (record.startTime === undefined || startTimeOf(record.pid) === record.startTime);
}

import { rmSync } from 'node:fs';
import { ensurePackages, ownedFolder, startTopology } from '../../lib/instances/index.js';
import { readState, stillRunning, topologyFolder, writeState } from './state.js';

/**
 * `npm run topology -- up`: the scale-out topology on this machine (docs/deploying.md,
 * "Local topology"). Its last two lines are BASE_URL=... and API_KEY=...
 */

const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const previous = readState();
  if (previous?.processes.some(stillRunning)) {
    throw new Error(
      `a topology started at ${previous.startedAt} still runs (npm run topology -- status); stop it first with npm run topology -- down`,
    );
  }
  const missing = ensurePackages(say);
  if (missing) throw new Error(missing);

  rmSync(topologyFolder, { recursive: true, force: true });
  const startedAt = Date.now();
  const topology = await startTopology({
    folder: ownedFolder('run-', undefined, topologyFolder),
    persistent: true,
    // session only to compare with; the service needs transaction pooling to work (DATABASE_STATEMENTS=unnamed).
    ...(process.env['TOPOLOGY_POOL_MODE'] === 'session' ? { poolMode: 'session' as const } : {}),
    // The highly available database tier by default; TOPOLOGY_DATABASE=single for one primary and one replica.
    database: process.env['TOPOLOGY_DATABASE'] === 'single' ? 'single' : 'failover',
    log: (line) => say(`- +${((Date.now() - startedAt) / 1000).toFixed(1)} s: ${line}`),
  });
  writeState({
    startedAt: new Date(startedAt).toISOString(),
    folder: topology.folder,
    baseUrl: topology.baseUrl,
    apiKey: topology.apiKey,
    haproxySocket: topology.haproxy.statsSocket,
    processes: topology.processes(),
    ...(topology.cluster ? { monitorPort: topology.cluster.monitorPort } : {}),
    ...(topology.postgresRouter ? { postgresRouterSocket: topology.postgresRouter.haproxy.statsSocket } : {}),
  });
  say(`Up in ${((Date.now() - startedAt) / 1000).toFixed(1)} s; files and logs in ${topology.folder}`);
  for (const record of topology.processes())
    say(`  ${record.name.padEnd(17)} pid ${String(record.pid).padEnd(8)} 127.0.0.1:${record.port}`);
  say('Stop it with npm run topology -- down; see it with npm run topology -- status.');
  say(`BASE_URL=${topology.baseUrl}`);
  say(`API_KEY=${topology.apiKey}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`topology up failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

import { accepts, haproxyCommand, parseServerStats } from '../../lib/instances/index.js';
import { databaseNodes } from './databaseNodes.js';
import { readState, stillRunning, topologyFolder } from './state.js';

/**
 * `npm run topology -- status`: each process `topology -- up` started, with its
 * pid, port and liveness (running and accepting connections), and the
 * balancer's view of each instance, and each database node's role. Exits 0
 * when everything runs, 3 when something does not (or nothing was started).
 * With --json: the same as one JSON object (databaseNodes: name, role,
 * pids, port; processes: name, pid, port, running).
 */

const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<number> {
  const state = readState();
  if (!state) {
    say(`No topology in ${topologyFolder} (start one with npm run topology -- up).`);
    return 3;
  }
  const balancerView = new Map<string, string>();
  try {
    for (const server of parseServerStats(await haproxyCommand(state.haproxySocket, 'show stat')))
      balancerView.set(server.name, `balancer: ${server.status}, ${server.requests} requests`);
  } catch (error) {
    balancerView.set('*', `balancer view unavailable: ${(error as Error).message}`);
  }
  const nodes = await databaseNodes(state).catch((error: unknown) => {
    say(`database nodes unavailable: ${(error as Error).message}`);
    return [];
  });
  if (process.argv.includes('--json')) {
    const processes = await Promise.all(
      state.processes.map(async (record) => {
        const running = stillRunning(record);
        return {
          name: record.name,
          pid: record.pid,
          port: record.port,
          running,
          accepting: running && (await accepts(record.port)),
        };
      }),
    );
    say(
      JSON.stringify({ startedAt: state.startedAt, baseUrl: state.baseUrl, databaseNodes: nodes, processes }, null, 2),
    );
    return processes.every((record) => record.accepting) ? 0 : 3;
  }
  say(`Topology started ${state.startedAt}; files in ${state.folder}`);
  say(`${'process'.padEnd(17)} ${'pid'.padEnd(8)} ${'port'.padEnd(6)} state`);
  let allRunning = true;
  for (const record of state.processes) {
    const running = stillRunning(record);
    const listening = running && (await accepts(record.port));
    allRunning &&= listening;
    const liveness = !running ? 'NOT RUNNING' : listening ? 'running, accepting' : 'running, NOT accepting';
    const extra = balancerView.get(record.name);
    say(
      `${record.name.padEnd(17)} ${String(record.pid).padEnd(8)} ${String(record.port).padEnd(6)} ${liveness}${extra ? ` (${extra})` : ''}`,
    );
  }
  if (balancerView.has('*')) say(balancerView.get('*')!);
  for (const node of nodes)
    say(
      `database ${node.name.padEnd(16)} ${node.role.padEnd(10)} port ${node.port} pids ${node.pids.join(' ') || '-'}`,
    );
  say(`BASE_URL=${state.baseUrl}`);
  return allRunning ? 0 : 3;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`topology status failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);

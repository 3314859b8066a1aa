import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { stopPid } from '../../lib/instances/index.js';
import { readState, stillRunning, topologyFolder } from './state.js';

/**
 * `npm run topology -- down`: stops what `topology -- up` started, by the pids it
 * recorded, the balancer first and the primary last; then deletes the
 * topology's folder (data and logs) unless given --keep.
 */

const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const state = readState();
  if (!state) {
    say(`No topology state in ${topologyFolder}: nothing to stop.`);
    return;
  }
  const inStopOrder = [...state.processes].reverse();
  // The instances drain in parallel (each takes DRAIN_DELAY_MS); the rest one by one.
  const instances = inStopOrder.filter((record) => /^app\d+$/.test(record.name));
  const stopOne = async (record: (typeof inStopOrder)[number]) => {
    if (!stillRunning(record)) {
      say(`  ${record.name.padEnd(17)} pid ${record.pid}: not running`);
      return;
    }
    const startedAt = Date.now();
    const clean = await stopPid(record.pid, record.stopSignal, 30_000);
    say(
      `  ${record.name.padEnd(17)} pid ${record.pid}: stopped in ${Date.now() - startedAt} ms${clean ? '' : ' (killed after 30 s)'}`,
    );
  };
  for (const record of inStopOrder) {
    if (instances.includes(record)) {
      if (record === instances[0]) await Promise.all(instances.map(stopOne));
    } else {
      await stopOne(record);
    }
  }
  // The balancer's admin socket lives in a short folder of its own (lib/instances/haproxy.ts).
  rmSync(dirname(state.haproxySocket), { recursive: true, force: true });
  if (state.postgresRouterSocket) rmSync(dirname(state.postgresRouterSocket), { recursive: true, force: true });
  if (process.argv.includes('--keep')) {
    say(`Stopped; files and logs kept in ${topologyFolder}.`);
  } else {
    rmSync(topologyFolder, { recursive: true, force: true });
    say(`Stopped; removed ${topologyFolder}.`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`topology down failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

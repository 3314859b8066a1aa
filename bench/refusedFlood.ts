// npm run bench -- refused-flood [--connections 200] [--mebibytes 10] [--rounds 3]: the stall a flood of
// refused uploads causes. The built server (embedded database, a scratch DATA_DIR) on 127.0.0.1; each round,
// `connections` connections at once announce a body of `mebibytes` MiB to POST /v1/pets without a key
// (refused with 401 before the body is read) and send it as fast as the server reads, until the server ends
// the connection or the body is sent; meanwhile GET /healthz on a fresh connection every 20 ms, one at a
// time. Prints /healthz's worst and median latency per round and the bytes the clients got sent. Bounded: a round
// ends when every flooding connection has, or after 60 s. See src/http/server/refusedBodies.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { generateApiKey } from '../src/auth/keys.js';
import { fmt, median, startServer } from './lib.js';

const { values: flags } = parseArgs({
  options: {
    connections: { type: 'string', default: '200' },
    mebibytes: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
  },
});
const connections = Number(flags.connections);
const bodyBytes = Number(flags.mebibytes) * 1024 * 1024;
const roundCeilingMs = 60_000;
const probeIntervalMs = 20;
const filler = Buffer.alloc(64 * 1024, 0x20);

/** One refused upload: the bytes the server took before it ended the connection. */
function floodOne(port: number): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let sent = 0;
    const finish = () => {
      socket.destroy();
      resolve(sent);
    };
    const pump = () => {
      while (sent < bodyBytes && !socket.destroyed) {
        const chunk = filler.subarray(0, Math.min(filler.length, bodyBytes - sent));
        sent += chunk.length;
        if (!socket.write(chunk)) return;
      }
    };
    socket.on('connect', () => {
      socket.write(
        `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${bodyBytes}\r\n\r\n`,
      );
      pump();
    });
    socket.on('drain', pump);
    socket.on('data', () => undefined);
    socket.on('error', finish);
    socket.on('close', finish);
    socket.on('end', finish);
    setTimeout(finish, roundCeilingMs).unref();
  });
}

/** GET /healthz on a fresh connection: its latency in ms. */
function probe(url: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    get(`${url}/healthz`, { agent: false }, (response) => {
      response.resume();
      response.on('end', () => {
        resolve(performance.now() - started);
      });
    }).on('error', reject);
  });
}

const dataDir = mkdtempSync(join(tmpdir(), 'pet-store-flood-'));
const key = generateApiKey();
const server = await startServer({
  name: 'ours',
  args: ['dist/server.js'],
  env: { DATA_DIR: dataDir, BOOTSTRAP_API_KEY: key, LOG_LEVEL: 'warn', DRAIN_DELAY_MS: '0' },
  port: 3470,
  authorization: `Bearer ${key}`,
});
const port = Number(new URL(server.url).port);
try {
  console.log(`${connections} connections announcing ${flags.mebibytes} MiB each, refused (401); /healthz every 20 ms`);
  console.log(`quiet /healthz: ${fmt(median(await Promise.all([1, 2, 3, 4, 5].map(() => probe(server.url)))))} ms`);
  for (let round = 1; round <= Number(flags.rounds); round++) {
    const started = performance.now();
    let flooding = true;
    const flood = Promise.all(Array.from({ length: connections }, () => floodOne(port))).finally(() => {
      flooding = false;
    });
    const latencies: number[] = [];
    while (flooding) {
      latencies.push(await probe(server.url));
      await sleep(probeIntervalMs);
    }
    const taken = (await flood).reduce((sum, bytes) => sum + bytes, 0);
    const sorted = latencies.toSorted((a, b) => a - b);
    console.log(
      `round ${round}: /healthz max ${fmt(sorted.at(-1) ?? 0)} ms, median ${fmt(median(sorted))} ms ` +
        `(${sorted.length} probes); flood over in ${fmt((performance.now() - started) / 1000, 1)} s, ` +
        `the clients sent ${fmt(taken / 1024 / 1024)} MiB`,
    );
  }
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

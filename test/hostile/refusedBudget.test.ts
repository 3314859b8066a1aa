import { once } from 'node:events';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { UnreadBodyLimits } from '../../src/http/limits.js';
import { startHostileApp, type HostileApp } from './harness.js';
import { RawConnection } from './rawConnection.js';

/**
 * The server-wide budget for refused bodies (src/http/server/refusedBytes.ts):
 * past its bytes, or with its lingering sockets at their limit, a refused
 * connection closes as soon as its answer is written, whatever the
 * connection's own bounds (here far out of reach: 10 minutes, 1 GiB).
 */

const MiB = 1024 * 1024;
const roomy: Partial<UnreadBodyLimits> = {
  lingerMs: 600_000,
  lingerBytes: 1024 * MiB,
  refusedBytesBurst: 256 * MiB,
  // Refills next to nothing during the test: what is spent stays spent.
  refusedBytesPerSecond: 1,
  maxLingering: 1000,
};
const announced = 1024 * MiB;
const filler = Buffer.alloc(64 * 1024, 0x20);
/** Far below any per-connection bound; a close that takes longer is the linger's, not the budget's. */
const closeCeilingMs = 20_000;

const refusedHead = (h: HostileApp) =>
  `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${h.key}\r\n` +
  `Content-Type: application/json\r\nContent-Length: ${announced}\r\n\r\n`;

/** Opens a half-open-capable connection and the server's side of it. */
async function openWatched(h: HostileApp): Promise<{ client: RawConnection; server: Socket }> {
  const serverSide = once(h.app.server, 'connection') as Promise<[Socket]>;
  const client = await RawConnection.open(h.port, true);
  const [server] = await serverSide;
  return { client, server };
}

/** Sends the head and one chunk, reads the 413, then sends nothing more and keeps its side open. */
async function refusedAndSilent(h: HostileApp): Promise<{ client: RawConnection; server: Socket }> {
  const watched = await openWatched(h);
  watched.client.write(refusedHead(h));
  watched.client.write(filler);
  const answer = await watched.client.answer();
  if (answer.status !== 413 || answer.headers['connection'] !== 'close') {
    throw new Error(`expected a 413 with Connection: close, got ${answer.status} ${answer.headers['connection']}`);
  }
  return watched;
}

async function closesSoon(server: Socket): Promise<boolean> {
  if (server.destroyed) return true;
  return Promise.race([once(server, 'close').then(() => true), sleep(closeCeilingMs).then(() => false)]);
}

t.test('past the bytes of the budget, a refused connection closes at once', async (t) => {
  const burst = 4 * MiB;
  const h = await startHostileApp(t, { limits: { unreadBody: { ...roomy, refusedBytesBurst: burst } } });
  const first = await RawConnection.open(h.port, true);
  t.teardown(() => {
    first.destroy();
  });
  // A client that never stops: only the budget ends its linger (its own bound is 1 GiB).
  await first.sendUntilAnswered(refusedHead(h), () => filler, 256 * MiB, false);
  t.ok(first.hasAnswer(), 'the first got its answer');
  t.ok(first.closed, `and was cut off after ${Math.round(first.bodyBytesSent / MiB)} MiB, by the budget of 4 MiB`);

  const { client, server } = await refusedAndSilent(h);
  t.teardown(() => {
    client.destroy();
  });
  t.ok(await closesSoon(server), 'with the budget spent, the next refused connection is closed after its answer');
});

t.test('past the lingering sockets of the budget, a refused connection closes at once', async (t) => {
  const h = await startHostileApp(t, { limits: { unreadBody: { ...roomy, maxLingering: 1 } } });
  const lingering = await refusedAndSilent(h);
  t.teardown(() => {
    lingering.client.destroy();
  });
  const next = await refusedAndSilent(h);
  t.teardown(() => {
    next.client.destroy();
  });
  t.ok(await closesSoon(next.server), 'the second refused connection is closed after its answer');
  t.notOk(lingering.server.destroyed, 'while the first still lingers (its own bound is 10 minutes)');
});

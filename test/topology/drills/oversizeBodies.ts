import type { Test } from 'tap';
import type { Topology } from '../../../lib/instances/index.js';
import { httpLimits } from '../../../src/http/limits.js';
import { describeStatuses } from '../harness.js';

/**
 * Bodies over the limit sent through HAProxy (deploy/haproxy.cfg) to the
 * instances, in two phases on one topology.
 *
 * Ordinary traffic: the refused bytes stay within what one instance's
 * budget for them (src/http/server/refusedBytes.ts) gives, so every body
 * gets its 413 Error object, whether the instance read it to its end first
 * (up to httpLimits.unreadBody.discardBytes) or answered with
 * Connection: close and closed in stages. An instance that answered and
 * reset the connection while HAProxy was still forwarding the body (no
 * staged close, or a budget too small for a few large bodies at once) left
 * the client with "socket hang up" instead.
 *
 * A flood: the same bodies as fast as eight clients can send them, some
 * 60 MiB/s of refused bytes, far past the budget. An instance then closes
 * a refused connection as soon as its answer is written, and a client still
 * sending may lose the 413 to a reset; but every request still ends, with
 * its 413 or a closed connection: never another status (a 502 from HAProxy
 * taking the close for a failed server), never a timeout.
 */

const concurrency = 8;
const { bodyLimitBytes } = httpLimits;
const { discardBytes, refusedBytesBurst, refusedBytesPerSecond } = httpLimits.unreadBody;
const largeBytes = 8 * 1024 * 1024;

/** The size of the index-th body: in turn just past the limit, within the bound, past it, and large. */
function sizeOf(index: number): number {
  const spread = (range: number) => (index * 7919) % range;
  switch (index % 4) {
    case 0:
      return bodyLimitBytes + 1 + spread(4096);
    case 1:
      return bodyLimitBytes + 1 + spread(discardBytes - bodyLimitBytes);
    case 2:
      return discardBytes + 1 + spread(discardBytes);
    default:
      return largeBytes / 2 + spread(largeBytes / 2);
  }
}

const sizeClasses = ['just past the limit', 'within the bound', 'past the bound', 'large'];

/**
 * Lets bodies go no faster than one instance's budget refills, from a
 * bucket half its size: an instance reads at most what was sent, so even
 * if every body went to the same one its own bucket (which starts full)
 * always keeps more than half its burst. The largest body fits the half.
 */
class Pacer {
  readonly #capacity = refusedBytesBurst / 2;
  #bytes = this.#capacity;
  #filledAt = performance.now();

  async take(bytes: number): Promise<void> {
    for (;;) {
      const now = performance.now();
      this.#bytes = Math.min(this.#capacity, this.#bytes + ((now - this.#filledAt) / 1000) * refusedBytesPerSecond);
      this.#filledAt = now;
      if (this.#bytes >= bytes) {
        this.#bytes -= bytes;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, ((bytes - this.#bytes) / refusedBytesPerSecond) * 1000));
    }
  }
}

/** Connection errors a refused client still sending may see when the flood closes its connection at once. */
const closedConnection = new Set(['network: UND_ERR_SOCKET', 'network: EPIPE', 'network: ECONNRESET']);

/** The last drill on a topology: the flood leaves the instances' refused-bytes budgets spent. */
export async function oversizeBodiesDrill(t: Test, topology: Topology): Promise<void> {
  t.ok(largeBytes <= refusedBytesBurst / 2, 'the largest body fits half the budget, so paced traffic stays within it');
  const prefix = Buffer.from(JSON.stringify({ name: 'oversize', categoryId: 1 }));
  const bodies = Buffer.concat([prefix, Buffer.alloc(largeBytes - prefix.length, 0x20)]);

  /** Sends bodies 0..total-1 from `concurrency` clients; the outcomes by size class, and up to 20 failures. */
  const run = async (t: Test, total: number, pacer?: Pacer) => {
    const outcomes = sizeClasses.map(() => ({}) as Record<string, number>);
    const failures: string[] = [];
    let next = 0;
    const send = async (index: number) => {
      const size = sizeOf(index);
      await pacer?.take(size);
      let outcome: string;
      try {
        const response = await fetch(`${topology.baseUrl}/pets`, {
          method: 'POST',
          headers: { authorization: `Bearer ${topology.apiKey}`, 'content-type': 'application/json' },
          body: bodies.subarray(0, size),
          signal: AbortSignal.timeout(60_000),
        });
        const text = await response.text();
        let code: string | undefined;
        try {
          code = (JSON.parse(text) as { code?: string }).code;
        } catch {
          code = `(not JSON: ${text.slice(0, 40)})`;
        }
        outcome = response.status === 413 && code === 'payload_too_large' ? '413' : `${response.status} ${code}`;
      } catch (error) {
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        outcome = `network: ${cause?.code ?? cause?.message ?? (error as Error).name}`;
      }
      const counts = outcomes[index % 4]!;
      counts[outcome] = (counts[outcome] ?? 0) + 1;
      if (outcome !== '413' && failures.length < 20) failures.push(`${size} bytes: ${outcome}`);
    };
    const worker = async () => {
      for (let index = next++; index < total; index = next++) await send(index);
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    for (const [index, name] of sizeClasses.entries()) t.comment(`${name}: ${describeStatuses(outcomes[index]!)}`);
    if (failures.length > 0) t.comment(`failed: ${failures.join(' | ')}`);
    const count = (accept: (outcome: string) => boolean) =>
      outcomes.reduce(
        (sum, counts) => sum + Object.entries(counts).reduce((n, [o, c]) => n + (accept(o) ? c : 0), 0),
        0,
      );
    return { count };
  };

  await t.test('ordinary traffic, within the budget: every body gets its 413', async (t) => {
    const total = 200;
    const { count } = await run(t, total, new Pacer());
    const answered = count((outcome) => outcome === '413');
    t.equal(answered, total, `${answered} of ${total} bodies over the limit got their 413 through HAProxy`);
  });

  await t.test('a flood past the budget: each gets its 413 or a closed connection, nothing else', async (t) => {
    const total = 1000;
    const { count } = await run(t, total);
    const answered = count((outcome) => outcome === '413');
    const closed = count((outcome) => closedConnection.has(outcome));
    t.comment(`${answered} answered 413, ${closed} closed`);
    t.equal(
      answered + closed,
      total,
      `${total - answered - closed} of ${total} ended otherwise (another status, a timeout)`,
    );
  });
}

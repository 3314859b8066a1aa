import t from 'tap';
import { httpLimits } from '../../src/http/limits.js';
import { describeStatuses, startTestTopology, topologyTestOptions } from './harness.js';

/**
 * Bodies over the limit sent through HAProxy (deploy/haproxy.cfg) to the
 * instances: every one gets its 413 Error object, whether the instance read
 * the body to its end first (up to httpLimits.unreadBody.discardBytes) or
 * answered with Connection: close and closed in stages. An instance that
 * answered and reset the connection while HAProxy was still forwarding the
 * body left the client with "socket hang up" instead.
 */

const total = 1000;
const concurrency = 8;
const { bodyLimitBytes } = httpLimits;
const { discardBytes } = httpLimits.unreadBody;
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

t.test(`${total} bodies over the limit through HAProxy: every one gets its 413`, topologyTestOptions(), async (t) => {
  const topology = await startTestTopology(t);
  const prefix = Buffer.from(JSON.stringify({ name: 'oversize', categoryId: 1 }));
  const bodies = Buffer.concat([prefix, Buffer.alloc(largeBytes - prefix.length, 0x20)]);
  const outcomes = sizeClasses.map(() => ({}) as Record<string, number>);
  const failures: string[] = [];
  let next = 0;

  const send = async (index: number) => {
    const size = sizeOf(index);
    let outcome: string;
    try {
      const response = await fetch(`${topology.baseUrl}/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${topology.apiKey}`, 'content-type': 'application/json' },
        body: bodies.subarray(0, size),
        signal: AbortSignal.timeout(60_000),
      });
      const body = (await response.json()) as { code?: string; status?: number };
      outcome =
        response.status === 413 && body.code === 'payload_too_large' ? '413' : `${response.status} ${body.code}`;
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      outcome = `network: ${cause?.code ?? cause?.message ?? (error as Error).message}`;
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
  const answered = outcomes.reduce((sum, counts) => sum + (counts['413'] ?? 0), 0);
  t.equal(answered, total, `${answered} of ${total} bodies over the limit got their 413 through HAProxy`);
});

import { once } from 'node:events';
import type { Socket } from 'node:net';
import t, { type Test } from 'tap';
import { httpLimits } from '../../src/http/limits.js';
import { assertErrorAnswer, startHostileApp, type HostileApp } from './harness.js';
import { RawConnection } from './rawConnection.js';

/**
 * A body over the limit, on a real listening server over raw sockets
 * (RFC 9112 9.6): one up to the bound (httpLimits.unreadBody.discardBytes)
 * is read to its end before the 413, and the connection serves the next
 * request; one far past it gets a 413 with Connection: close, which the
 * client, still writing, reads whole before the server's end, not a reset.
 */

const { bodyLimitBytes } = httpLimits;
const { discardBytes, lingerBytes, lingerMs } = httpLimits.unreadBody;
/** Over the limit, well within the bound. */
const moderateBytes = bodyLimitBytes + 100_000;
/** What a client far past the bound would send; the answer comes long before. */
const hugeBytes = 64 * 1024 * 1024;

const filler = Buffer.alloc(64 * 1024, 0x20);
const chunked = (size: number) =>
  Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), filler.subarray(0, size), Buffer.from('\r\n')]);

function createPetHead(key: string, framing: Record<string, string>): string {
  const lines = [
    'POST /v1/pets HTTP/1.1',
    'Host: 127.0.0.1',
    `Authorization: Bearer ${key}`,
    'Content-Type: application/json',
    ...Object.entries(framing).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** The same connection answers a listPets afterwards. */
async function servesAnother(t: Test, h: HostileApp, connection: RawConnection): Promise<void> {
  connection.write(`GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${h.key}\r\n\r\n`);
  const next = await connection.answer();
  t.equal(next.status, 200, 'the same connection then serves another request');
  t.notOk(connection.error, `and was never reset (${connection.error?.code})`);
}

/** After a closing answer: the server ends the connection, without a reset while the client was writing. */
async function endsWithoutReset(t: Test, connection: RawConnection): Promise<void> {
  await connection.whenClosed();
  t.equal(connection.error?.code, undefined, 'no ECONNRESET or EPIPE: the client reads the answer, then the end');
  t.ok(connection.endedByServer, 'the server ended its side after the answer');
}

t.test('a body over the limit', async (t) => {
  const h = await startHostileApp(t);
  const connections: RawConnection[] = [];
  const open = async (allowHalfOpen = false) => {
    const connection = await RawConnection.open(h.port, allowHalfOpen);
    connections.push(connection);
    return connection;
  };
  t.teardown(() => {
    for (const connection of connections) connection.destroy();
  });

  await t.test('up to the bound, with Content-Length: read, 413, and the connection stays', async (t) => {
    const connection = await open();
    connection.write(createPetHead(h.key, { 'Content-Length': String(moderateBytes) }));
    connection.write(Buffer.alloc(moderateBytes, 0x20));
    const answer = await connection.answer();
    const error = await assertErrorAnswer(t, h, answer, 413, 'payload_too_large');
    t.equal(error['message'], `The request body is larger than ${bodyLimitBytes} bytes.`);
    t.not(answer.headers['connection'], 'close', 'no Connection: close');
    await servesAnother(t, h, connection);
  });

  await t.test('up to the bound, chunked: read, 413, and the connection stays', async (t) => {
    const connection = await open();
    connection.write(createPetHead(h.key, { 'Transfer-Encoding': 'chunked' }));
    for (let sent = 0; sent < moderateBytes; sent += filler.length) connection.write(chunked(filler.length));
    connection.write('0\r\n\r\n');
    const answer = await connection.answer();
    await assertErrorAnswer(t, h, answer, 413, 'payload_too_large');
    t.not(answer.headers['connection'], 'close', 'no Connection: close');
    await servesAnother(t, h, connection);
  });

  await t.test('past the bound, with Content-Length: 413 with Connection: close, then a clean end', async (t) => {
    const connection = await open();
    await connection.sendUntilAnswered(
      createPetHead(h.key, { 'Content-Length': String(hugeBytes) }),
      () => filler,
      hugeBytes,
    );
    t.ok(
      connection.bodyBytesSent < hugeBytes,
      `the answer came while the client was writing (${connection.bodyBytesSent} bytes sent)`,
    );
    const answer = await connection.answer();
    await assertErrorAnswer(t, h, answer, 413, 'payload_too_large');
    t.equal(answer.headers['connection'], 'close', 'Connection: close');
    await endsWithoutReset(t, connection);
  });

  await t.test(
    'past the bound, chunked: read up to the bound, 413 with Connection: close, then a clean end',
    async (t) => {
      const connection = await open();
      await connection.sendUntilAnswered(
        createPetHead(h.key, { 'Transfer-Encoding': 'chunked' }),
        () => chunked(filler.length),
        hugeBytes,
      );
      t.ok(
        connection.bodyBytesSent < hugeBytes,
        `the answer came while the client was writing (${connection.bodyBytesSent} bytes sent)`,
      );
      t.ok(connection.bodyBytesSent > discardBytes, 'after the server read up to the bound');
      const answer = await connection.answer();
      await assertErrorAnswer(t, h, answer, 413, 'payload_too_large');
      t.equal(answer.headers['connection'], 'close', 'Connection: close');
      await endsWithoutReset(t, connection);
    },
  );

  await t.test('a request refused before its body is read (401) ends the same way past the bound', async (t) => {
    const connection = await open();
    await connection.sendUntilAnswered(
      createPetHead('not-a-key', { 'Content-Length': String(hugeBytes) }),
      () => filler,
      hugeBytes,
    );
    t.ok(connection.bodyBytesSent < hugeBytes, 'the answer came while the client was writing');
    const answer = await connection.answer();
    await assertErrorAnswer(t, h, answer, 401, 'unauthorized');
    t.equal(answer.headers['connection'], 'close', 'Connection: close');
    await endsWithoutReset(t, connection);
  });

  await t.test('a client that goes on sending after the closing answer is cut off after lingerBytes', async (t) => {
    const connection = await open(true);
    await connection.sendUntilAnswered(
      createPetHead(h.key, { 'Content-Length': String(hugeBytes) }),
      () => filler,
      hugeBytes,
      false,
    );
    t.ok(connection.hasAnswer(), 'the answer did arrive');
    t.ok(connection.endedByServer, 'the server ended its side after the answer');
    t.ok(connection.closed, `then closed the connection (${connection.error?.code ?? 'no error'})`);
    t.ok(
      connection.bodyBytesSent < hugeBytes,
      `before the client could send its ${hugeBytes} bytes (${connection.bodyBytesSent} sent; lingerBytes ${lingerBytes})`,
    );
  });

  await t.test('a client that neither sends more nor closes is closed after lingerMs', async (t) => {
    // The client cannot see a close while its own side stays open: the server's socket is watched.
    const serverSide = once(h.app.server, 'connection') as Promise<[Socket]>;
    const connection = await open(true);
    const [socket] = await serverSide;
    const closed = once(socket, 'close');
    connection.write(createPetHead(h.key, { 'Content-Length': String(hugeBytes) }));
    connection.write(filler);
    const answer = await connection.answer();
    t.equal(answer.headers['connection'], 'close', '413 with Connection: close');
    const answeredAt = performance.now();
    await closed;
    const waitedMs = performance.now() - answeredAt;
    // A ceiling, not the expected time: Node's own timeouts would close it too, much later.
    t.ok(
      waitedMs < httpLimits.requestTimeoutMs,
      `the server closed it ${Math.round(waitedMs)} ms after the answer (lingerMs ${lingerMs})`,
    );
  });
});

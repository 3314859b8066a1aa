import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy to PostgreSQL that the test breaks on purpose:
 * - refuse(true) cuts every open connection and closes each new one at once
 *   (no server takes writes: the balancer during a switchover), until refuse(false);
 * - hold(true) keeps each new connection waiting, unanswered, until hold(false)
 *   (a database that does not answer new connections); open ones go on;
 * - arm() lets the next COMMIT through and cuts the connection instead of
 *   forwarding the server's answer: the transaction is committed, and the
 *   client never learns it.
 */
export interface FaultyProxy {
  port: number;
  refuse(on: boolean): void;
  hold(on: boolean): void;
  /** Connections held so far (hold). */
  held(): number;
  arm(): void;
  /** COMMIT answers dropped so far. */
  dropped(): number;
  /** Connections the proxy accepted (or closed at once while refusing). */
  connections(): number;
  close(): Promise<void>;
}

// A simple-protocol Query message: 'Q', its length (4 + 7), "COMMIT\0".
const commitMessage = Buffer.concat([Buffer.from('Q'), Buffer.from([0, 0, 0, 11]), Buffer.from('COMMIT\0')]);

export async function faultyProxy(targetPort: number): Promise<FaultyProxy> {
  let armed = false;
  let refusing = false;
  let dropped = 0;
  let connections = 0;
  let holding = false;
  let held = 0;
  const waiting: (() => void)[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    connections += 1;
    if (refusing) {
      client.on('error', () => undefined);
      client.destroy();
      return;
    }
    if (holding) {
      held += 1;
      sockets.add(client);
      client.on('error', () => undefined);
      waiting.push(() => {
        if (!client.destroyed) forward(client);
      });
      return;
    }
    forward(client);
  });
  function forward(client: Socket): void {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    let commitSent = false;
    client.on('data', (chunk: Buffer) => {
      if (armed && chunk.includes(commitMessage)) {
        armed = false;
        commitSent = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (commitSent) {
        dropped += 1;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address');
  return {
    port: address.port,
    refuse(on) {
      refusing = on;
      if (on) for (const socket of sockets) socket.destroy();
    },
    hold(on) {
      holding = on;
      if (!on) for (const release of waiting.splice(0)) release();
    },
    held: () => held,
    arm: () => {
      armed = true;
    },
    dropped: () => dropped,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => {
          resolve();
        });
      }),
  };
}

/** url with its port replaced by the proxy's. */
export function viaProxy(url: string, proxy: FaultyProxy): string {
  const proxied = new URL(url);
  proxied.port = String(proxy.port);
  return proxied.toString();
}

import { once } from 'node:events';
import { createServer, request as forward, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedExchange {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The service's status; the client never saw it when dropped is true. */
  status: number;
  dropped: boolean;
}

/**
 * An HTTP proxy in front of the service that, for the requests `drop` picks, lets the service answer in
 * full and then resets the client's connection instead of passing the answer on: the service committed,
 * and the client saw only a lost connection. Every exchange is recorded.
 */
export async function startDroppingProxy(
  target: string,
  drop: (request: { method: string; url: string }, index: number) => boolean,
): Promise<{ url: string; exchanges: ProxiedExchange[]; close(): Promise<void> }> {
  const upstream = new URL(target);
  const exchanges: ProxiedExchange[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    const method = incoming.method ?? 'GET';
    const url = incoming.url ?? '/';
    const dropped = drop({ method, url }, exchanges.length);
    const record: ProxiedExchange = { method, url, headers: incoming.headers, status: 0, dropped };
    exchanges.push(record);
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const headers = { ...incoming.headers, host: upstream.host };
      const upstreamRequest = forward(
        { host: upstream.hostname, port: upstream.port, method, path: url, headers },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => body.push(chunk));
          answer.on('end', () => {
            record.status = answer.statusCode ?? 0;
            if (dropped) {
              incoming.socket.resetAndDestroy();
              return;
            }
            outgoing.writeHead(record.status, answer.headers);
            outgoing.end(Buffer.concat(body));
          });
        },
      );
      upstreamRequest.on('error', () => incoming.socket.destroy());
      upstreamRequest.end(Buffer.concat(chunks));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

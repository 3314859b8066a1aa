import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a scrape answers: the text exposition format of a registry (or of a cluster's). */
export interface MetricsSource {
  contentType: string;
  render(): Promise<string>;
}

export interface MetricsServer {
  /** http://host:port of the listener. */
  address: string;
  close(): Promise<void>;
}

/**
 * Scrapes that arrive while a render is under way share it: however many scrapers there are, the event loop
 * the API also runs on spends one render on them at a time, not one each (20 concurrent scrapers held the
 * API's /healthz near a second a request when each rendered on its own).
 */
export function sharedRender(render: () => Promise<string>): () => Promise<string> {
  let underWay: Promise<string> | undefined;
  return () => {
    underWay ??= render().finally(() => {
      underWay = undefined;
    });
    return underWay;
  };
}

/**
 * A listener of its own for GET /metrics, apart from the API port so that
 * it is never public: no fastify, no hooks, nothing of the API's pipeline.
 */
export async function startMetricsServer(
  host: string,
  port: number,
  source: MetricsSource,
  onError: (error: unknown) => void,
): Promise<MetricsServer> {
  const render = sharedRender(() => source.render());
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?', 1)[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: scrape GET /metrics\n');
      return;
    }
    render().then(
      (body) => {
        response.writeHead(200, { 'content-type': source.contentType }).end(request.method === 'HEAD' ? '' : body);
      },
      (error: unknown) => {
        onError(error);
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n');
      },
    );
  });
  server.listen(port, host);
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([error]: unknown[]) => {
      throw error;
    }),
  ]);
  const { address, port: bound } = server.address() as AddressInfo;
  const shown = address.includes(':') ? `[${address}]` : address;
  return {
    address: `http://${shown}:${bound}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

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
 * After a render, the API's event loop gets this many times the render's own duration to itself before the next
 * render begins: renders then hold at most a quarter of the loop, however many scrapers ask back to back (with
 * renders merely shared, 20 such scrapers still tripled /healthz's median: `npm run bench -- scrapers`).
 */
const renderRestFactor = 3;
/**
 * The longest rest between renders, in ms. A cluster primary's render mostly waits for its workers' answers (up
 * to scrapeAnswerMs), which costs the loop nothing; a Prometheus scraping every 15 s never waits at all.
 */
const maxRenderRestMs = 250;

export interface RenderClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: RenderClock = { now: () => performance.now(), sleep: (ms) => sleep(ms) };

/**
 * Scrapes that arrive while a render is under way share it: however many scrapers there are, the event loop
 * the API also runs on spends one render on them at a time, not one each (20 concurrent scrapers held the
 * API's /healthz near a second a request when each rendered on its own). A scrape that arrives while renders
 * rest waits for the next one, so every answer is rendered after its scrape arrived, or shares a render under way.
 */
export function sharedRender(render: () => Promise<string>, clock: RenderClock = realClock): () => Promise<string> {
  let underWay: Promise<string> | undefined;
  let restUntil = 0;
  const renderNow = async () => {
    const started = clock.now();
    try {
      return await render();
    } finally {
      const ended = clock.now();
      restUntil = ended + Math.min((ended - started) * renderRestFactor, maxRenderRestMs);
      underWay = undefined;
    }
  };
  return () => {
    if (underWay === undefined) {
      const rest = restUntil - clock.now();
      underWay = rest > 0 ? clock.sleep(rest).then(renderNow) : renderNow();
    }
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

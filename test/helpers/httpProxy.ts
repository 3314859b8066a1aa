import { once } from 'node:events';
import { createServer, request as forward, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isBytesMediaType, isJsonMediaType } from '../../src/openapi/mediaTypes.js';

/** A response as the proxy hands it to a rewrite: status, headers (lower-case names) and body. */
export interface ProxiedResponse {
  status: number;
  headers: Record<string, string>;
  /**
   * The body as text; as the bytes that came when its Content-Type is a bytes media type
   * (src/openapi/mediaTypes.ts: an image/png photo is not UTF-8 and must pass unchanged).
   */
  body: string | Buffer;
}

/** The body parsed, when the answer's Content-Type is a JSON media type; else undefined (bytes, text, none). */
export function jsonBodyOf(response: ProxiedResponse): unknown {
  if (!isJsonMediaType(response.headers['content-type']) || typeof response.body !== 'string') return undefined;
  return JSON.parse(response.body) as unknown;
}

export interface ProxiedRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
}

export type Rewrite = (response: ProxiedResponse, request: ProxiedRequest) => ProxiedResponse;

function flatten(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

// Framing is the proxy's own: the body may change length.
const hopByHop = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/**
 * An HTTP proxy in front of a service that rewrites each answer before the
 * client sees it: a deployment that breaks the contract in one chosen way
 * (a header dropped, a status changed, a body altered), for testing what
 * checks the contract from outside.
 */
export async function startRewritingProxy(
  target: string,
  rewrite: Rewrite,
): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const headers = { ...incoming.headers, host: upstream.host };
      const upstreamRequest = forward(
        { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => body.push(chunk));
          answer.on('end', () => {
            const bytes = Buffer.concat(body);
            const received = {
              status: answer.statusCode ?? 502,
              headers: flatten(answer.headers),
              body: isBytesMediaType(answer.headers['content-type']) ? bytes : bytes.toString('utf8'),
            };
            const sent = rewrite(received, { method: incoming.method ?? 'GET', url: incoming.url ?? '/' });
            const kept = Object.fromEntries(Object.entries(sent.headers).filter(([name]) => !hopByHop.has(name)));
            outgoing.writeHead(sent.status, kept);
            outgoing.end(sent.body);
          });
        },
      );
      upstreamRequest.on('error', () => {
        outgoing.writeHead(502);
        outgoing.end();
      });
      upstreamRequest.end(Buffer.concat(chunks));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

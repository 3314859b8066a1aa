import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import type { Operation } from '../../lib/conformance/spec.js';
import type { StatefulTransport } from '../../lib/conformance/stateful.js';

/** An HTTP server answering the operations under /v1 from an in-memory store (a fixture's); its origin. */
export async function serveStore(t: Test, operations: Operation[], store: StatefulTransport): Promise<string> {
  const templates = operations.map((operation) => ({
    operation,
    pattern: new RegExp(`^/v1${operation.path.replace(/\{([^}]+)\}/g, '(?<$1>[^/]+)')}$`),
  }));
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const url = new URL(incoming.url ?? '/', 'http://fixture');
      const route = templates
        .map(({ operation, pattern }) => ({ operation, match: pattern.exec(url.pathname) }))
        .find(({ operation, match }) => match !== null && operation.method === incoming.method);
      const reply = (status: number, text: string, headers: Record<string, string> = {}) => {
        outgoing.writeHead(status, { ...(text ? { 'content-type': 'application/json' } : {}), ...headers });
        outgoing.end(text);
      };
      if (route === undefined) {
        reply(404, '{"code":"not_found"}');
        return;
      }
      const pathParams = Object.fromEntries(
        Object.entries(route.match!.groups ?? {}).map(([name, value]) => [name, decodeURIComponent(value)]),
      );
      const headers = Object.fromEntries(
        Object.entries(incoming.headers).map(([name, value]) => [name, String(value)]),
      );
      const body = Buffer.concat(chunks).toString();
      void store
        .send({
          operationId: route.operation.operationId,
          intent: 'http',
          pathParams,
          query: [...url.searchParams],
          headers,
          ...(body ? { body } : {}),
        })
        .then((answer) => {
          reply(answer!.status, answer!.text, Object.fromEntries(answer!.headers));
        });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

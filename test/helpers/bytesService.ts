import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the service was sent: the request line, the headers, the body byte for byte. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  contentType: string | undefined;
  body: Buffer;
}

export interface Reply {
  status?: number;
  contentType: string;
  body: Uint8Array | string;
}

/**
 * A service whose answers the test chooses (from what it was sent): to see what a tool sends on the wire and
 * what it makes of an answer in a bytes media type. Closed by the test's teardown.
 */
export async function bytesService(
  answer: (received: Received) => Reply,
  t: { teardown: (close: () => void) => void },
): Promise<{ origin: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const sent = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        contentType: request.headers['content-type'],
        body: Buffer.concat(chunks),
      };
      received.push(sent);
      const { status = 200, contentType, body } = answer(sent);
      response.writeHead(status, { 'content-type': contentType }).end(body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, received };
}

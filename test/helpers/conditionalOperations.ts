import { createConnection } from 'node:net';
import { listOperations, type OpenApiDocument, type OperationEntry } from '../../src/openapi/document.js';
import type { ResponseObject } from '../../src/openapi/document.js';

function resolved(spec: OpenApiDocument, response: ResponseObject): ResponseObject | undefined {
  const name = /^#\/components\/responses\/([^/]+)$/.exec(response.$ref ?? '')?.[1];
  return name === undefined ? response : spec.components.responses?.[name];
}

/** The operations of a spec that honour If-Match or If-None-Match: those that declare a 412 or an ETag on a response. */
export function conditionalOperations(spec: OpenApiDocument): OperationEntry[] {
  return listOperations(spec).filter(({ operation }) =>
    Object.entries(operation.responses ?? {}).some(
      ([status, response]) => status === '412' || resolved(spec, response)?.headers?.['ETag'] !== undefined,
    ),
  );
}

/**
 * If-Match and If-None-Match values that are neither `*` nor a list of
 * entity tags (RFC 9110 13.1.1, 13.1.2). A header on two lines (`*`, then
 * a tag) is sent by rawRequest: an injected request cannot repeat a field.
 */
export const malformedEntityTagFields = ['*, "x"', 'garbage', 'W/', '"unterminated', '"a""b"', '"a" junk', ', ,'];

/** A request written to the socket as given (header lines repeated as listed); resolves with the status. */
export async function rawRequest(port: number, head: string[], body = ''): Promise<number> {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(await rawExchange(port, head, body))?.[1] ?? 0);
}

/** A request written to the socket as given, then half-closed; resolves with all the server sent. */
export function rawExchange(
  port: number,
  head: string[],
  body = '',
  length = Buffer.byteLength(body),
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('error', reject);
    socket.on('end', () => {
      resolve(answer);
    });
    const lengthLine = length === 0 ? [] : [`Content-Length: ${length}`];
    socket.end([...head, 'Host: localhost', 'Connection: close', ...lengthLine, '', body].join('\r\n'));
  });
}

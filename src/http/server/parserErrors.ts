import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors.js';
import { everyResponseHeaders } from '../arrival/securityHeaders.js';

/** What Node's HTTP parser reports; rawPacket (the bytes read, keys included) is never logged. */
interface ParserError extends Error {
  code?: string;
  reason?: string;
  bytesParsed?: number;
}

function parserErrorAnswer(error: ParserError): ApiError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(408, 'invalid_request', 'The request was not received in time; the connection is closed.');
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(431, 'invalid_request', 'The request headers are too large or too many.');
    default:
      return new ApiError(400, 'invalid_request', 'The request is not valid HTTP/1.1.');
  }
}

/**
 * The answer Node is still making for an earlier request on this socket
 * whose message was whole, if any: the bytes that failed to parse came after
 * it. (An error inside a request's own body is that request's answer.)
 */
function responseInFlight(socket: Socket): ServerResponse | undefined {
  // null once a response is done, undefined before the first.
  const current = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  return current && !current.writableFinished && current.req.complete ? current : undefined;
}

/** Node keeps the response being written on the socket; a second status line must not follow its headers. */
function responseStarted(socket: Socket): boolean {
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  return current?.headersSent === true;
}

/**
 * fastify's clientErrorHandler: Node's parser errors (a request that is not
 * HTTP, headers too large, a request not received within the headers or
 * request timeout of httpLimits) answer the Error object with a new
 * X-Request-Id, are logged once without the raw bytes, and close the
 * connection. There is no request object here: the answer is written to the
 * socket as it stands.
 */
export function clientErrorHandler(this: FastifyInstance, error: ParserError, socket: Socket): void {
  const requestId = randomUUID();
  // HPE_PAUSED: the client ended a connection whose reading was stopped
  // (connections.ts); nothing more is answered on it.
  if (error.code === 'HPE_PAUSED') socket.destroy();
  if (error.code === 'ECONNRESET' || error.code === 'HPE_PAUSED' || socket.destroyed) {
    this.log.debug({ requestId, errorCode: error.code }, 'client connection reset');
    return;
  }
  const answer = parserErrorAnswer(error);
  this.log.info(
    { requestId, status: answer.status, errorCode: error.code, reason: error.reason, bytesParsed: error.bytesParsed },
    'client error: request not parsed',
  );
  const inFlight = responseInFlight(socket);
  if (inFlight !== undefined) {
    // Bytes after a request whose answer is still being made (an onSend hook
    // reading the rest of its body): HTTP/1.1 answers in order, so that answer
    // goes first and is the connection's last; the bytes after it get none.
    inFlight.once('close', () => {
      socket.destroySoon();
    });
    return;
  }
  if (!responseStarted(socket)) answerOnSocket(socket, answer, requestId);
  socket.destroySoon();
}

/**
 * Writes the Error object straight to a socket Node has no response object
 * for (a parser error, CONNECT), with X-Request-Id, the headers every
 * answer carries and the answer's own, and closes the connection.
 */
export function answerOnSocket(socket: Socket, answer: ApiError, requestId: string): void {
  if (socket.writable) {
    const body = JSON.stringify(answer.body());
    const head = [
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}`,
      'content-type: application/json; charset=utf-8',
      `content-length: ${Buffer.byteLength(body)}`,
      `x-request-id: ${requestId}`,
      ...Object.entries({ ...everyResponseHeaders, ...answer.headers }).map(([name, value]) => `${name}: ${value}`),
      'connection: close',
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  }
  socket.destroySoon();
}

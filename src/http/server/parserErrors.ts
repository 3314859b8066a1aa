import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors.js';
import { excerpt } from '../errors/excerpt.js';
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

/** A request Node's parser cut before any route answered it, as the request metrics record it. */
export interface CutRequest {
  /** The request line's method, when the parser got that far; else undefined. */
  method: string | undefined;
  status: number;
  /** Since the connection opened: an unparsed request has no start of its own. */
  seconds: number;
}

/** Where each connection began (see CutRequest.seconds). */
const openedAt = new WeakMap<Socket, number>();

/**
 * socket.bytesRead when the last answer on a connection was finished: bytes
 * read past it are a request begun and not answered. (Node's parser would
 * say so too, but from Node.js 24 it is gone by the time a reset is
 * reported.)
 */
const answeredBytes = new WeakMap<Socket, number>();

/**
 * Records when each connection of the server opens (the duration of a
 * request cut on it) and how far each answer on it got (whether a client
 * that leaves was in the middle of a request).
 */
export function timeConnections(server: Server): void {
  server.on('connection', (socket) => {
    openedAt.set(socket, performance.now());
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    response.once('finish', () => answeredBytes.set(request.socket, request.socket.bytesRead));
  });
}

/** The request whose message the error interrupted, if Node had parsed its head (a body too slow, 408). */
function requestInProgress(socket: Socket): IncomingMessage | undefined {
  const current = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  return current && !current.req.complete ? current.req : undefined;
}

/** Node keeps the response being written on the socket; a second status line must not follow its headers. */
function responseStarted(socket: Socket): boolean {
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  return current?.headersSent === true;
}

/** Whether bytes of a request arrived on this socket since its last answer was finished. */
function midRequest(socket: Socket): boolean {
  return socket.bytesRead > (answeredBytes.get(socket) ?? 0);
}

/**
 * The client went away: its side ended in the middle of a message (the
 * parser's HPE_INVALID_EOF_STATE), it reset the connection, or the socket
 * can no longer be written. Nothing can be answered.
 */
function clientGone(error: ParserError, socket: Socket): boolean {
  return (
    error.code === 'HPE_INVALID_EOF_STATE' ||
    error.code === 'ECONNRESET' ||
    error.code === 'EPIPE' ||
    socket.destroyed ||
    !socket.writable
  );
}

/** What a parser error's handler reports to the request metrics. */
export interface ParserErrorObservers {
  /** A request cut and answered (400, 408, 431). */
  cut: (cut: CutRequest) => void;
  /** A request its client closed or reset the connection in the middle of: nothing was answered. */
  abandoned: () => void;
}

/**
 * fastify's clientErrorHandler: Node's parser errors (a request that is not
 * HTTP, headers too large, a request not received within the headers or
 * request timeout of httpLimits) answer the Error object with a new
 * X-Request-Id, are logged once without the raw bytes, counted by
 * `observe.cut` (the request metrics), and close the connection. There is
 * no request object here: the answer is written to the socket as it stands.
 * A request whose head was parsed and whose answer was decided but not sent
 * (a 401 waiting for the rest of a slow body) gets the 408 instead.
 *
 * A client that ends or resets its connection in the middle of a request
 * gets nothing (no one reads it): one log line without a status, and
 * `observe.abandoned`, never an answered 400. A reset between requests is
 * logged at debug only.
 */
export function clientErrorHandlerWith(observe: ParserErrorObservers) {
  return function clientErrorHandler(this: FastifyInstance, error: ParserError, socket: Socket): void {
    const requestId = randomUUID();
    // HPE_PAUSED: the client ended a connection whose reading was stopped
    // (connections.ts); nothing more is answered on it.
    if (error.code === 'HPE_PAUSED') {
      socket.destroy();
      this.log.debug({ requestId, errorCode: error.code }, 'client connection reset');
      return;
    }
    const inFlight = responseInFlight(socket);
    const request = requestInProgress(socket);
    const seconds = (performance.now() - (openedAt.get(socket) ?? performance.now())) / 1000;
    const facts = {
      requestId,
      method: request?.method ?? null,
      route: null,
      path: request?.url === undefined ? null : excerpt(request.url.split('?', 1)[0] ?? ''),
      durationMs: Math.round(seconds * 100_000) / 100,
      errorCode: error.code,
      reason: error.reason,
      bytesParsed: error.bytesParsed,
    };
    if (clientGone(error, socket)) {
      if (error.code === 'HPE_INVALID_EOF_STATE' || midRequest(socket)) {
        this.log.info({ ...facts, status: null }, 'request abandoned by the client');
        observe.abandoned();
      } else {
        this.log.debug({ requestId, errorCode: error.code }, 'client connection reset');
      }
      // An earlier request's answer still being made goes out first, if the client still reads.
      if (inFlight !== undefined && socket.writable)
        inFlight.once('close', () => {
          socket.destroySoon();
        });
      else if (!socket.destroyed) socket.destroySoon();
      return;
    }
    const answer = parserErrorAnswer(error);
    const answered = inFlight === undefined && !responseStarted(socket);
    this.log.info({ ...facts, status: answered ? answer.status : null }, 'request cut before routing');
    if (inFlight !== undefined) {
      // Bytes after a request whose answer is still being made (an onSend hook
      // reading the rest of its body): HTTP/1.1 answers in order, so that answer
      // goes first and is the connection's last; the bytes after it get none.
      inFlight.once('close', () => {
        socket.destroySoon();
      });
      return;
    }
    if (answered) {
      answerOnSocket(socket, answer, requestId);
      observe.cut({ method: request?.method, status: answer.status, seconds });
    }
    socket.destroySoon();
  };
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

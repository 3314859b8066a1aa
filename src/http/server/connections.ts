import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from '../../errors.js';
import { excerpt } from '../errors/excerpt.js';
import { answerOnSocket } from './parserErrors.js';
import { requestIdOf } from '../arrival/requestId.js';
import { everyResponseHeaders } from '../arrival/securityHeaders.js';

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * Requests one connection may have waiting for their answers. Node parses
 * every request of a chunk it reads (64 KiB: some 1,800 bare GETs) and
 * hands each to the app at once, so a client that pipelines without reading
 * would otherwise queue unbounded work ahead of everyone else. Browsers and
 * HTTP clients do not pipeline, or only a few deep (undici's pipelining
 * option is typically 1 to 10); 16 leaves them room, and 16 requests per
 * connection is what any keep-alive client can cost at once.
 */
export const maxUnansweredPerConnection = 16;

interface ConnectionState {
  unanswered: number;
  /** A request past the depth was refused: the connection closes after its answer; nothing more is served. */
  refused: boolean;
}

const connections = new WeakMap<Socket, ConnectionState>();

function stateOf(socket: Socket): ConnectionState {
  let state = connections.get(socket);
  if (state === undefined) {
    state = { unanswered: 0, refused: false };
    connections.set(socket, state);
  }
  return state;
}

/**
 * The answer to the first request past the depth, queued behind the
 * answers before it (HTTP/1.1 answers in order). It closes the connection:
 * the requests the client sent after it are never run, and RFC 9112 9.3.2
 * has a pipelining client retry unanswered requests on a new connection.
 */
function refuseDeepPipelining(log: FastifyBaseLogger, request: IncomingMessage, response: ServerResponse): void {
  const requestId = requestIdOf(request);
  const answer = new ApiError(
    429,
    'rate_limited',
    `At most ${maxUnansweredPerConnection} requests may wait for their answers on one connection; ` +
      'read the answers before sending more. This connection is closed.',
  );
  log.info(
    {
      requestId,
      method: request.method,
      route: null,
      path: excerpt((request.url ?? '').split('?', 1)[0] ?? ''),
      status: answer.status,
      unanswered: maxUnansweredPerConnection,
    },
    'request refused: too many unanswered requests on its connection',
  );
  const body = JSON.stringify(answer.body());
  response.shouldKeepAlive = false;
  response.writeHead(answer.status, {
    ...everyResponseHeaders,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
    'retry-after': '1',
  });
  response.end(body);
}

/**
 * Node's HTTP parser reads the socket itself, below the stream: pausing the
 * socket alone does not stop it. Node's own back-pressure on pipelined
 * requests pauses both, as here; the parser finishes the chunk it holds.
 */
function stopReading(socket: Socket): void {
  socket.pause();
  (socket as Socket & { parser?: { pause?: () => void } }).parser?.pause?.();
}

/**
 * The app's request listener with a bound on what one connection can
 * queue: at most maxUnansweredPerConnection requests reach the app before
 * their answers are written; the next is refused (429, connection closed)
 * and the socket stops being read, so the rest of what the client sent
 * costs Node's parsing of one chunk at most and no work of the app.
 */
function limitUnanswered(app: RequestListener, log: FastifyBaseLogger): RequestListener {
  return function limitedRequest(request, response) {
    const state = stateOf(request.socket);
    if (state.refused) return;
    if (state.unanswered >= maxUnansweredPerConnection) {
      state.refused = true;
      stopReading(request.socket);
      refuseDeepPipelining(log, request, response);
      return;
    }
    state.unanswered += 1;
    response.once('close', () => {
      state.unanswered -= 1;
    });
    app(request, response);
  };
}

/** CONNECT (a proxy tunnel): Node closes the socket without a word unless someone answers it. */
function refuseConnect(log: FastifyBaseLogger, request: IncomingMessage, socket: Socket): void {
  const requestId = requestIdOf(request);
  // An empty Allow: the target (host:port) is no resource of this service (RFC 9110 10.2.1).
  const answer = new ApiError(405, 'method_not_allowed', 'CONNECT is not served: this service is not a proxy.', {
    allow: '',
  });
  log.info(
    { requestId, method: 'CONNECT', route: null, path: excerpt(request.url ?? ''), status: answer.status },
    'request refused: CONNECT is not served',
  );
  answerOnSocket(socket, answer, requestId);
}

/**
 * Node's server events that would otherwise answer for the app, or not at
 * all. fastify listens to 'request' only; here that listener gets the
 * per-connection bound, and:
 * - 'checkContinue' (Expect: 100-continue) goes to the app like any
 *   request, so that Node does not send 100 Continue before the app has
 *   checked the key and the body's size (see expectContinue.ts);
 * - 'checkExpectation' (any other Expect) goes to the app, whose arrival
 *   step answers 417 with the Error object instead of Node's bare 417;
 * - 'connect' (CONNECT) is answered with the Error object, 405.
 */
export function guardConnections(server: Server, log: FastifyBaseLogger): void {
  const listeners = server.listeners('request') as RequestListener[];
  if (listeners.length !== 1) throw new Error(`expected fastify's one request listener, found ${listeners.length}`);
  const app = listeners[0] as RequestListener;
  const limited = limitUnanswered(app, log);
  server.removeListener('request', app);
  server.on('request', limited);
  server.on('checkContinue', limited);
  server.on('checkExpectation', limited);
  server.on('connect', (request: IncomingMessage, socket: Socket) => {
    refuseConnect(log, request, socket);
  });
}

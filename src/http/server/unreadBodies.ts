import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bodyWithheld } from '../arrival/expectHeader.js';
import type { UnreadBodyLimits } from '../limits.js';
import { closeGracefully } from './gracefulClose.js';
import { RefusedBytesBudget } from './refusedBytes.js';

/** How reading the rest of a body ended. */
type Rest = 'read' | 'too long' | 'over budget' | 'gone';

/** How the connection goes on after the answer. */
type Ending = 'open' | 'closing' | 'closing at once';

/**
 * Reads what is left of a request's body and drops it chunk by chunk, until
 * its end, past maxBytes, or until the connection goes. Node stops reading
 * a socket whose request nobody reads, so without this a client still
 * sending would wait for the answer that waits for it.
 */
function discardRest(raw: IncomingMessage, maxBytes: number, budget: RefusedBytesBudget): Promise<Rest> {
  return new Promise((resolve) => {
    let discarded = 0;
    const settle = (rest: Rest) => {
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('close', onClose);
      raw.off('error', onClose);
      resolve(rest);
    };
    const onData = (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > maxBytes) settle('too long');
      else if (!budget.spend(chunk.length)) settle('over budget');
    };
    const onEnd = () => {
      settle('read');
    };
    const onClose = () => {
      settle(raw.complete ? 'read' : 'gone');
    };
    raw.on('data', onData);
    raw.once('end', onEnd);
    raw.once('close', onClose);
    raw.once('error', onClose);
    raw.resume();
  });
}

/** The part of the body still to come, as far as the request declares it. */
function declaredLength(raw: IncomingMessage): number | undefined {
  const length = raw.headers['content-length'];
  return length === undefined || raw.headers['transfer-encoding'] !== undefined ? undefined : Number(length);
}

/**
 * What is left of the body before an answer that came first (a body over
 * the limit, fastify's 413; a request refused on arrival, 401 or 404): the
 * connection can serve another request only once the body is off it.
 * 'closing' when the client may still be sending and the answer must say so;
 * 'closing at once' when the server-wide budget (refusedBytes.ts) is spent.
 */
async function settleBody(
  request: FastifyRequest,
  reply: FastifyReply,
  limits: UnreadBodyLimits,
  budget: RefusedBytesBudget,
): Promise<Ending> {
  const raw = request.raw;
  // complete: Node has the whole message; readableEnded: a stream that is no socket (inject) was read.
  if (raw.complete || raw.readableEnded) return 'open';
  // A client waiting for 100 Continue sends no body; Node closes the connection after the answer.
  if (bodyWithheld(request, reply)) return 'closing';
  if (!budget.hasBytes()) return 'closing at once';
  const declared = declaredLength(raw);
  if (declared !== undefined && declared > limits.discardBytes) return 'closing';
  const rest = await discardRest(raw, limits.discardBytes, budget);
  if (rest === 'over budget') return 'closing at once';
  return rest === 'too long' ? 'closing' : 'open';
}

/**
 * RFC 9112 9.6 for every answer given before the request's body was read
 * to its end (fastify answers 413 from Content-Length without reading, and
 * a chunked body is refused where it passes the limit): the rest of a body
 * of up to limits.discardBytes is read and dropped first, so the answer
 * comes after the whole request and the connection stays open (fastify's
 * Connection: close on a parser error is taken back); past that, the answer
 * says Connection: close and the connection ends in stages (gracefulClose.ts),
 * so that a client still sending reads the answer instead of a reset; all of
 * it within the server's budget for refused bytes (refusedBytes.ts). A proxy
 * in front (HAProxy) sees the same: an answer to a request it has forwarded
 * whole, or a close after an answer.
 */
export function answerAfterTheBody(app: FastifyInstance, limits: UnreadBodyLimits): void {
  // Registered with the server, before every other onSend hook: a close
  // decided after it (draining) stands; before it, only fastify's parser
  // sets one, on a body it refused.
  const budget = new RefusedBytesBudget(limits);
  app.addHook('onSend', async (request, reply, payload) => {
    const ending = await settleBody(request, reply, limits, budget);
    if (ending !== 'open') {
      reply.header('connection', 'close');
      // Closing at once is Node's own way after Connection: close: the socket goes when the answer is written.
      if (ending === 'closing') closeGracefully(request.raw, limits, budget);
    } else if (reply.getHeader('connection') === 'close') {
      reply.removeHeader('connection');
    }
    return payload;
  });
}

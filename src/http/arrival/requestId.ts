import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest, RawRequestDefaultExpression } from 'fastify';

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

/** fastify's genReqId: a valid incoming X-Request-Id is kept, else a new UUID. */
export function requestIdOf(request: RawRequestDefaultExpression): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : randomUUID();
}

/**
 * Sets X-Request-Id on arrival rather than in onSend: error replies keep
 * headers already set, and a synchronous step on arrival is cheaper than an
 * async onSend hook.
 */
export function echoRequestId(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
}

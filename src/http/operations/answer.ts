import type { FastifyReply, FastifyRequest } from 'fastify';
import { tagged, type ConditionalFacts } from './conditional.js';

/** The media type of every body the spec declares, as fastify would write it for JSON. */
const jsonContentType = 'application/json; charset=utf-8';

type Serialize = (document: unknown) => string;

/**
 * How a route answers its handler's success, compiled once per operation:
 * the body validated and serialized by the serializer fastify compiled for
 * that status from the spec (serialization.ts: a body outside the contract
 * throws, and the error handler answers 500), then, for a success that
 * declares ETag, the tag over those bytes, and for a GET its conditions
 * (304, or a 412 where declared). One function where fastify would look the
 * serializer up per response (by status and media type), run a
 * preSerialization check and an onSend hook.
 */
export function answerFor(conditional: ConditionalFacts | undefined) {
  // Each status's serializer, taken from the route's once: the handler is the route's own.
  const serializers = new Map<number, Serialize | null>();
  function serializerOf(reply: FastifyReply, status: number): Serialize | null {
    let serialize = serializers.get(status);
    if (serialize === undefined) {
      serialize = (reply.getSerializationFunction(String(status), 'application/json') as Serialize | undefined) ?? null;
      serializers.set(status, serialize);
    }
    return serialize;
  }
  /** `link`: the handler's own Link header, which its entity tag covers (conditional.ts). */
  return function answer(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    body: unknown,
    link: string | undefined,
  ): unknown {
    const serialize = serializerOf(reply, status);
    // A status the spec gives no JSON body: fastify's own way.
    if (serialize === null) return body;
    const json = serialize(body);
    if (conditional?.taggedStatuses.has(status) && tagged(request, reply, json, conditional, link)) {
      reply.code(304);
      return reply.send();
    }
    reply.header('content-type', jsonContentType);
    return json;
  };
}

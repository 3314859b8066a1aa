import type { FastifyReply, FastifyRequest } from 'fastify';
import { isJsonMediaType } from '../../openapi/mediaTypes.js';
import { tagged, type ConditionalFacts } from './conditional.js';

type Serialize = (document: unknown) => string;

interface Serializer {
  serialize: Serialize;
  /** The Content-Type it answers: the JSON media type the status declares, in UTF-8. */
  contentType: string;
}

/** The JSON media type a status of the route declares (application/json, problem+json...), if any. */
function declaredJsonType(reply: FastifyReply, status: number): string | undefined {
  const responses = (reply.request.routeOptions.schema?.response ?? {}) as Record<string, { content?: object }>;
  return Object.keys(responses[String(status)]?.content ?? {}).find(isJsonMediaType);
}

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
  const serializers = new Map<number, Serializer | null>();
  function serializerOf(reply: FastifyReply, status: number): Serializer | null {
    let serializer = serializers.get(status);
    if (serializer === undefined) {
      const type = declaredJsonType(reply, status) ?? 'application/json';
      const serialize = reply.getSerializationFunction(String(status), type) as Serialize | undefined;
      serializer = serialize ? { serialize, contentType: `${type}; charset=utf-8` } : null;
      serializers.set(status, serializer);
    }
    return serializer;
  }
  /** `link`: the handler's own Link header, which its entity tag covers (conditional.ts). */
  return function answer(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    body: unknown,
    link: string | undefined,
  ): unknown {
    const serializer = serializerOf(reply, status);
    // A status the spec gives no JSON body: fastify's own way.
    if (serializer === null) return body;
    const json = serializer.serialize(body);
    if (conditional?.taggedStatuses.has(status) && tagged(request, reply, json, conditional, link)) {
      reply.code(304);
      return reply.send();
    }
    reply.header('content-type', serializer.contentType);
    return json;
  };
}

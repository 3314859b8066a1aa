import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv/dist/2020.js';
import { mediaTypeEntryOf } from '../../openapi/mediaTypes.js';
import type { OpenApiDocument, OperationObject } from '../../openapi/document.js';
import { responseOf, tagged, type ConditionalFacts } from './conditional.js';
import { ResponseContractError } from './serialization.js';

interface Writer {
  /** The bytes sent for the handler's body; throws a ResponseContractError for a body outside the contract. */
  write: (body: unknown) => string | Buffer;
  /** The Content-Type it answers: the media type the status declares (JSON in UTF-8). */
  contentType: string;
}

/**
 * For each status of the operation, the first media type it declares that an entry of
 * src/openapi/mediaTypes.ts covers. Read from the spec, not the route's schema: the glue leaves out a
 * media type declared without a schema, as raw bytes may be.
 */
export function answeredMediaTypesOf(spec: OpenApiDocument, operation: OperationObject): Map<number, string> {
  const answered = new Map<number, string>();
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    const content = responseOf(spec, response)?.content ?? {};
    const type = Object.keys(content).find((declared) => mediaTypeEntryOf(declared) !== undefined);
    if (type !== undefined && /^\d{3}$/.test(status)) answered.set(Number(status), type);
  }
  return answered;
}

const notBytes: ErrorObject = {
  instancePath: '',
  keyword: 'type',
  params: {},
  message: 'must be bytes (a Uint8Array)',
  schemaPath: '#',
};

/** A bytes answer as it is (a Buffer views the handler's bytes, never copies them); anything else breaks the contract. */
function writeBytes(body: unknown): Buffer {
  if (!(body instanceof Uint8Array)) throw new ResponseContractError([notBytes]);
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/**
 * How a route answers its handler's success, compiled once per operation:
 * the body written as its media type's entry says (src/openapi/mediaTypes.ts): JSON validated and
 * serialized by the serializer fastify compiled for that status from the spec
 * (serialization.ts: a body outside the contract throws, and the error
 * handler answers 500), bytes as they are (anything but bytes is a 500 too), then, for a success that
 * declares ETag, the tag over those bytes, and for a GET its conditions
 * (304, or a 412 where declared). One function where fastify would look the
 * serializer up per response (by status and media type), run a
 * preSerialization check and an onSend hook.
 */
export function answerFor(conditional: ConditionalFacts | undefined, answeredMediaTypes: Map<number, string>) {
  // Each status's writer, taken from the route's once: the handler is the route's own.
  const writers = new Map<number, Writer | null>();
  function writerOf(reply: FastifyReply, status: number): Writer | null {
    let writer = writers.get(status);
    if (writer === undefined) {
      const type = answeredMediaTypes.get(status) ?? 'application/json';
      if (mediaTypeEntryOf(type)?.serialize === 'bytes') writer = { write: writeBytes, contentType: type };
      else {
        const serialize = reply.getSerializationFunction(String(status), type) as Writer['write'] | undefined;
        writer = serialize ? { write: serialize, contentType: `${type}; charset=utf-8` } : null;
      }
      writers.set(status, writer);
    }
    return writer;
  }
  /** `link`: the handler's own Link header, which its entity tag covers (conditional.ts). */
  return function answer(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    body: unknown,
    link: string | undefined,
  ): unknown {
    const writer = writerOf(reply, status);
    // A status the spec gives no body: fastify's own way.
    if (writer === null) return body;
    const payload = writer.write(body);
    if (conditional?.taggedStatuses.has(status) && tagged(request, reply, payload, conditional, link)) {
      reply.code(304);
      return reply.send();
    }
    reply.header('content-type', writer.contentType);
    return payload;
  };
}

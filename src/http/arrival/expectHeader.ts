import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import { excerpt } from '../errors/excerpt.js';
import { bodyTooLarge } from '../operations/bodyLimit.js';

// Node's own test for the one expectation HTTP defines (RFC 9110 10.1.1).
const continueExpected = /(?:^|\W)100-continue(?:$|\W)/i;

/**
 * A step on arrival: an expectation other than 100-continue cannot be met,
 * 417 with the Error object (Node would answer a bare 417 of its own; the
 * server's 'checkExpectation' event brings such requests here instead, see
 * connections.ts).
 */
export function refuseUnknownExpectation(request: FastifyRequest): void {
  const expectation = request.headers.expect;
  if (expectation !== undefined && !continueExpected.test(expectation)) {
    throw new ApiError(
      417,
      'invalid_request',
      `The expectation '${excerpt(expectation)}' cannot be met; only Expect: 100-continue is supported.`,
    );
  }
}

/** Responses that sent 100 Continue: their client was told to send the body. */
const continued = new WeakSet<ServerResponse>();

/**
 * The client expects 100 Continue (HTTP/1.1, as Node honours it) and was not
 * sent one: it holds its body back, so none is coming to be read.
 */
export function bodyWithheld(request: FastifyRequest, reply: FastifyReply): boolean {
  const expectation = request.headers.expect;
  const http11 = request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor === 1;
  return http11 && expectation !== undefined && continueExpected.test(expectation) && !continued.has(reply.raw);
}

function bodyFollows(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Expect: 100-continue. Node would send 100 Continue as soon as the headers
 * arrive; the server's 'checkContinue' event brings the request to the app
 * instead (connections.ts), and 100 Continue is sent here, before the body
 * is read: after the request was admitted (key, rate limit: the onRequest
 * steps) and its declared length is within the body limit. A request
 * refused before gets its answer without 100, and Node closes the
 * connection after it (the client may not have sent the body).
 */
export function registerContinue(app: FastifyInstance, bodyLimitBytes: number): void {
  app.addHook('preParsing', (request, reply, payload, done) => {
    const expectation = request.headers.expect;
    if (expectation === undefined || !continueExpected.test(expectation) || !bodyFollows(request)) {
      done(null, payload);
      return;
    }
    // The route's limit (an operation's x-body-limit-bytes), else the server's.
    const limit = request.routeOptions.bodyLimit || bodyLimitBytes;
    if (Number(request.headers['content-length'] ?? 0) > limit) {
      done(bodyTooLarge(limit));
      return;
    }
    if (request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor >= 1) {
      reply.raw.writeContinue();
      continued.add(reply.raw);
    }
    done(null, payload);
  });
}

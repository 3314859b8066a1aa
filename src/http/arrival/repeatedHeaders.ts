import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import { excerpt } from '../errors/excerpt.js';
import type { Step } from '../pipeline.js';

/**
 * Header fields HTTP defines as lists (RFC 9110 5.3): repeated lines are
 * one comma-separated list, so repeating them is fine.
 */
const listValued = new Set(['if-none-match', 'if-match']);

/**
 * Single-valued fields whose repetition Node hides: it keeps the first Host
 * or Content-Type and drops the rest, so which one counts would depend on
 * the order (RFC 9112 3.2: two Host lines are a 400). Authorization is
 * counted by authentication, whose 400 carries a Bearer challenge.
 */
const httpSingletons = ['host', 'content-type'];

/** Every header parameter the spec declares, wherever it is (an operation's parameters or components). */
function declaredHeaderParameters(node: unknown, found: Set<string>): Set<string> {
  if (Array.isArray(node)) {
    for (const item of node) declaredHeaderParameters(item, found);
  } else if (typeof node === 'object' && node !== null) {
    const record = node as Record<string, unknown>;
    if (record['in'] === 'header' && typeof record['name'] === 'string') found.add(record['name'].toLowerCase());
    for (const value of Object.values(record)) declaredHeaderParameters(value, found);
  }
  return found;
}

/** The header fields a request may carry once: the spec's header parameters that are not lists, and Host and Content-Type. */
export function singleValuedHeaders(spec: unknown): ReadonlySet<string> {
  const names = declaredHeaderParameters(spec, new Set(httpSingletons));
  for (const name of listValued) names.delete(name);
  return names;
}

/** The first of these fields the request carries on more than one line, as the client spelled it. */
function firstRepeated(rawHeaders: string[], names: ReadonlySet<string>): string | undefined {
  let seen: Set<string> | undefined;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const raw = rawHeaders[index] ?? '';
    const name = raw.toLowerCase();
    if (!names.has(name)) continue;
    if (seen?.has(name)) return raw;
    (seen ??= new Set()).add(name);
  }
  return undefined;
}

/**
 * A step on arrival: a single-valued header sent twice is a 400. Node joins
 * the lines of a field it does not know with ", " (two Idempotency-Key
 * lines became one key, "a, b") and keeps the first of those it knows;
 * either way the request does not say one thing. The raw lines tell.
 */
export function refuseRepeatedHeaders(names: ReadonlySet<string>): Step {
  return function refuseRepeatedHeadersStep(request: FastifyRequest): void {
    const repeated = firstRepeated(request.raw.rawHeaders, names);
    if (repeated !== undefined) {
      throw new ApiError(400, 'invalid_request', `Send one ${excerpt(repeated)} header; this request has several.`);
    }
  };
}

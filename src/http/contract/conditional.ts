import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * A strong entity tag of what a 200 says: the serialized body and, when the
 * handler set one, its Link header (a page whose body is unchanged but that
 * gained a next page has changed). 132 bits of SHA-256, base64url, from
 * the one-shot crypto.hash (no Hash object per response). The Link is mixed
 * into the body's digest rather than appended to the body: the body joined to
 * it would be a new string, copied whole to be hashed, and the body then
 * copied again to be written. Hashed on its own, the body is flattened once
 * and written as it is: 12-14 MiB less resident under load on the lists
 * (npm run bench:variants, same minute), the same CPU.
 */
export function entityTagOf(payload: string, link: unknown): string {
  const digest = hash('sha256', payload, 'base64url');
  const tag = typeof link === 'string' ? hash('sha256', `${digest}\n${link}`, 'base64url') : digest;
  return `"${tag.slice(0, 22)}"`;
}

/**
 * If-None-Match (RFC 9110, 13.1.2): `*`, or a list of tags compared weakly
 * (W/ ignored). Commas inside a tag cannot occur in the tags this service makes.
 */
export function noneMatch(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((candidate) => {
    const value = candidate.trim();
    return value === '*' || (value.startsWith('W/') ? value.slice(2) : value) === tag;
  });
}

/**
 * An onSend route hook for operations that declare ETag and 304 in
 * openapi.yaml: it tags every 200 and answers 304 without a body when the
 * request's If-None-Match matches. It runs after response validation, which
 * has checked the 200 body it hashes.
 */
export function conditionalGetHook(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  if (reply.statusCode !== 200 || typeof payload !== 'string') {
    done(null, payload);
    return;
  }
  const tag = entityTagOf(payload, reply.getHeader('link'));
  reply.header('etag', tag);
  if (!noneMatch(request.headers['if-none-match'], tag)) {
    done(null, payload);
    return;
  }
  reply.code(304);
  reply.removeHeader('content-type');
  reply.removeHeader('content-length');
  done(null, null);
}

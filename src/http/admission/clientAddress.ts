import { isIP } from 'node:net';
import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';

// The forms a forwarded address may carry a port in (RFC 7239 6 node
// syntax, which some proxies also use in X-Forwarded-For): 192.0.2.1:80,
// [2001:db8::1]:80 and [2001:db8::1]. A bare IPv6 address has colons of
// its own, so only the bracketed form says where a port starts.
const ipv4WithPort = /^([0-9.]+):[0-9]{1,5}$/;
const bracketedIpv6 = /^\[([0-9a-fA-F:.]+)\](?::[0-9]{1,5})?$/;

/** The address in a forwarded value, or undefined when it is none (a name, `unknown`, `01.1.1.1`, a zone id). */
export function forwardedAddress(value: string): string | undefined {
  const bracketed = bracketedIpv6.exec(value)?.[1];
  if (bracketed !== undefined) return isIP(bracketed) === 6 ? bracketed : undefined;
  const address = ipv4WithPort.exec(value)?.[1] ?? value;
  return isIP(address) !== 0 && !address.includes('%') ? address : undefined;
}

/**
 * The client address a request counts against (the per-address rate
 * limit): the first address, from the connection outwards, that is not a
 * trusted proxy, in one canonical form (IPv4-mapped IPv6 as IPv4, IPv6
 * compressed and grouped by /56 as @fastify/rate-limit does). When that
 * entry of X-Forwarded-For is not an address, the nearest address known to
 * be real stands for the client: the trusted proxy that sent the entry. So
 * junk in the header never opens a bucket of its own; it shares the
 * proxy's, and requests through a well-behaved proxy never carry it.
 */
export function clientAddressOf(request: FastifyRequest): string {
  // fastify's ips: the connection's address, then X-Forwarded-For from the
  // right, up to and including the first that is not a trusted proxy.
  const chain = request.ips ?? [request.ip];
  for (let index = chain.length - 1; index >= 0; index -= 1) {
    const address = forwardedAddress(chain[index] ?? '');
    if (address !== undefined) return normalizeIP(address);
  }
  return normalizeIP(request.socket.remoteAddress ?? 'unknown');
}

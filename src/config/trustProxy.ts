import { isIP } from 'node:net';

const example = 'e.g. TRUST_PROXY=10.0.0.5 or TRUST_PROXY=10.0.0.0/8,fd00::/8';

/** One TRUST_PROXY entry: an IPv4 or IPv6 address, optionally with a prefix length; undefined when valid. */
function entryProblem(entry: string): string | undefined {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0 || address.includes('%')) {
    return `'${entry}' is not an IPv4 or IPv6 address or CIDR`;
  }
  if (prefix === undefined) return undefined;
  const bits = family === 4 ? 32 : 128;
  if (!/^[0-9]{1,3}$/.test(prefix) || Number(prefix) > bits) {
    return `'${entry}' has a prefix length outside 0-${bits}`;
  }
  // 0.0.0.0/0 and ::/0 would believe everyone, which is what `true` does.
  if (Number(prefix) === 0) return `'${entry}' would trust every address`;
  return undefined;
}

/**
 * Why a TRUST_PROXY value is refused, or undefined when it is `false` or a
 * list of the proxies' addresses/CIDRs. `true` and a hop count are refused:
 * both believe X-Forwarded-For from whoever connects, so a client that
 * reaches an instance directly could name any address and escape the
 * per-address rate limit (fastify 5.12.1 made a numeric trustProxy trust
 * nobody for the same reason).
 */
export function trustProxyProblem(setting: string): string | undefined {
  if (setting === 'false') return undefined;
  if (setting === 'true') {
    return (
      'TRUST_PROXY=true would let any client choose its address (X-Forwarded-For) and so escape the ' +
      `per-address rate limit; name the proxies' addresses or CIDRs instead (${example}).`
    );
  }
  if (/^[0-9]+$/.test(setting)) {
    return (
      `TRUST_PROXY=${setting} looks like a hop count, which would believe X-Forwarded-For from whoever ` +
      `connects, balancer or not; name the proxies' addresses or CIDRs instead (${example}).`
    );
  }
  const problems = setting
    .split(',')
    .map((entry) => entryProblem(entry.trim()))
    .filter((problem) => problem !== undefined);
  if (problems.length === 0) return undefined;
  return `TRUST_PROXY: ${problems.join('; ')}; name the proxies' addresses or CIDRs, comma-separated (${example}), or false.`;
}

/** fastify's trustProxy from a TRUST_PROXY that loadConfig accepted: false, or the proxies' addresses/CIDRs. */
export function trustProxy(setting: string): false | string[] {
  const problem = trustProxyProblem(setting);
  if (problem !== undefined) throw new Error(problem);
  if (setting === 'false') return false;
  return setting.split(',').map((entry) => entry.trim());
}

type TrustProxy = boolean | string | ((address: string, hop: number) => boolean);

/**
 * fastify's trustProxy from TRUST_PROXY: false, a hop count (trust that many
 * proxies in front), or proxy addresses/CIDRs. loadConfig refuses `true`.
 */
export function trustProxy(setting: string): TrustProxy {
  if (setting === 'false') return false;
  if (setting === 'true') throw new Error('TRUST_PROXY=true is refused: name a hop count or the proxies');
  if (!/^[0-9]+$/.test(setting)) return setting;
  const hops = Number(setting);
  return (_address, hop) => hop < hops;
}

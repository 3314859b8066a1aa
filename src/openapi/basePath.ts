import type { ServerObject } from './types.js';

/**
 * The path every operation is served under: the path of the servers' URLs,
 * which must all agree (they differ only in host).
 */
export function basePathOf(document: { servers: ServerObject[] }): string {
  const paths = new Set(document.servers.map((server) => new URL(server.url).pathname.replace(/\/$/, '')));
  const [path, ...others] = paths;
  if (path === undefined || others.length > 0) {
    throw new Error(`openapi.yaml: the servers must share one base path (found ${[...paths].join(', ') || 'none'})`);
  }
  return path;
}

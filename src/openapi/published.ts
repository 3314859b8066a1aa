import type { ServerObject } from './types.js';

/**
 * Servers marked x-internal (staging, a developer's machine) are for this
 * team's tools, which read openapi.yaml from the repository: the documents
 * the service publishes (/v1/openapi.json and .yaml, the docs page) leave
 * them out, so consumers are neither pointed at them nor told their names.
 */
export function isPublishedServer(server: ServerObject): boolean {
  return server['x-internal'] !== true;
}

/** The spec as published: its servers without the internal ones. */
export function publishedSpec<T extends object>(spec: T): T {
  const servers = (spec as { servers?: ServerObject[] }).servers;
  return servers === undefined ? spec : { ...spec, servers: servers.filter(isPublishedServer) };
}

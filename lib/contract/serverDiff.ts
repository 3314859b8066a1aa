// Where clients send their requests: the servers of the document, and those a path item or an operation names in
// their place (OpenAPI 3.1, Path Item and Operation `servers`). A URL with variables is the URL its defaults make;
// a variable's enum names the other URLs a client may be configured with.
import { isObject, type Json, type JsonObject } from '../openapi/dereference.js';
import type { Level } from './change.js';
import type { Operation } from './operations.js';
import type { Reporter } from './reporter.js';
import { code, literal, pointerStep } from './text.js';

/** URLs one server may stand for, past which an enum's combinations are not spelled out. */
const maxUrlsPerServer = 64;

/** A server URL's origin (scheme and host) and its base path, without a final slash. */
function splitServer(url: string): { origin: string; path: string } {
  const match = /^([a-z][a-z0-9+.-]*:\/\/[^/]*)?(.*)$/i.exec(url);
  return { origin: (match?.[1] ?? '').toLowerCase(), path: (match?.[2] ?? '').replace(/\/+$/, '') };
}

interface Server {
  /** As written, for the reader. */
  written: string;
  /** The URL its variables' defaults make: where a client that configures nothing sends its requests. */
  url: string;
  /** Every URL its variables' enums allow (the default's among them), normalized for comparison. */
  urls: Set<string>;
  internal: boolean;
}

const normalized = (url: string) => {
  const { origin, path } = splitServer(url);
  return `${origin}${path}`;
};

/** The URLs a templated server URL stands for: each variable replaced by its default, then by each enum value. */
function expand(url: string, variables: JsonObject): { url: string; urls: Set<string> } {
  const values = (name: string): string[] => {
    const variable = isObject(variables[name]) ? variables[name] : {};
    const fallback = variable['default'] === undefined ? `{${name}}` : String(variable['default']);
    const allowed = Array.isArray(variable['enum']) ? variable['enum'].map(String) : [];
    return [fallback, ...allowed.filter((value) => value !== fallback)];
  };
  let urls = [url];
  for (const [, name = ''] of url.matchAll(/\{([^}]*)\}/g))
    urls = urls
      .flatMap((partial) => values(name).map((value) => partial.replace(`{${name}}`, value)))
      .slice(0, maxUrlsPerServer);
  return { url: urls[0] ?? url, urls: new Set(urls.map(normalized)) };
}

function serversOf(list: Json | undefined): Server[] {
  return (Array.isArray(list) ? list : []).filter(isObject).map((server) => {
    const written = String(server['url']);
    const { url, urls } = expand(written, isObject(server['variables']) ? server['variables'] : {});
    return { written, url, urls, internal: server['x-internal'] === true };
  });
}

const shown = (server: Server) => (server.url === server.written ? server.url : `${server.written} (${server.url})`);

/**
 * A server gone is breaking for clients configured with it (a warning for one marked x-internal: staging, a
 * developer's machine); one that another replaces on the same host moved its base path, on another host its host
 * (a server of the same kind added in its place, on another host and path, is where it moved).
 * A server is kept while the head still serves its default URL, whatever the head writes.
 */
function compareServerLists(before: Server[], after: Server[], pointer: string, out: Reporter) {
  const servedBefore = new Set(before.flatMap((server) => [...server.urls]));
  const servedAfter = new Set(after.flatMap((server) => [...server.urls]));
  const added = after.filter((server) => !servedBefore.has(normalized(server.url)));
  const gone = before.filter((server) => !servedAfter.has(normalized(server.url)));
  const successors = new Map<Server, Server>();
  const taken = new Set<Server>();
  const free = (server: Server) => added.filter((other) => !taken.has(other) && other.internal === server.internal);
  const pair = (server: Server, successor: Server | undefined) => {
    if (!successor) return;
    successors.set(server, successor);
    taken.add(successor);
  };
  for (const server of gone) {
    const { origin, path } = splitServer(server.url);
    const candidates = free(server);
    pair(
      server,
      candidates.find((other) => splitServer(other.url).origin === origin) ??
        candidates.find((other) => splitServer(other.url).path === path),
    );
  }
  // A server replaced by one on another host and path moved all the same: its place in the list first.
  for (const server of gone)
    if (!successors.has(server)) {
      const candidates = free(server);
      const place = after[before.indexOf(server)];
      pair(server, candidates.find((other) => other === place) ?? candidates[0]);
    }
  for (const server of gone) {
    const { origin, path } = splitServer(server.url);
    const level: Level = server.internal ? 'warning' : 'breaking';
    const successor = successors.get(server);
    const samePlace = successor && splitServer(successor.url).origin === origin;
    const values = { before: server.url, after: successor?.url ?? null };
    if (successor && samePlace)
      out.add(
        'api-server-base-path-changed',
        level,
        'request',
        `server ${code(shown(server))}: base path ${literal(path || '/')} → ${literal(splitServer(successor.url).path || '/')}`,
        pointer,
        'head',
        values,
      );
    else if (successor)
      out.add(
        'api-server-host-changed',
        level,
        'request',
        `server ${code(shown(server))}: moved to ${code(shown(successor))}`,
        pointer,
        'head',
        values,
      );
    else
      out.add('api-server-removed', level, 'request', `server ${code(shown(server))}: removed`, pointer, 'base', {
        before: server.url,
      });
  }
  for (const server of added)
    if (!taken.has(server))
      out.add('api-server-added', 'additive', 'request', `server ${code(shown(server))}: added`, pointer, 'head', {
        after: server.url,
      });
}

/** The document's servers. */
export function compareServers(base: JsonObject, head: JsonObject, out: Reporter) {
  compareServerLists(serversOf(base['servers']), serversOf(head['servers']), pointerStep('servers'), out);
}

/** An operation's servers, where it or its path item names some in place of the document's. */
export function compareOperationServers(
  base: Operation,
  head: Operation,
  documents: { base: JsonObject; head: JsonObject },
  out: Reporter,
) {
  if (base.servers === undefined && head.servers === undefined) return;
  compareServerLists(
    serversOf(base.servers ?? documents.base['servers']),
    serversOf(head.servers ?? documents.head['servers']),
    head.serversPointer,
    out,
  );
}

// Where a change of one place comes from: the shared component its pointer runs through, so the reviewer's report
// can say one change of a component once, with the places it reaches, instead of once per place.
import { dereference, isObject, type Json, type JsonObject } from '../openapi/dereference.js';
import type { Change } from './change.js';
import { code } from './text.js';

export interface Origin {
  /** The last component the pointer enters through a `$ref`: `#/components/schemas/Error`. */
  component: string;
  /** The pointer inside that component ('' for the component itself). */
  inner: string;
  /** The pointer's steps before it entered the component: the place that uses it. */
  site: string[];
}

const steps = (pointer: string) =>
  pointer
    .split('/')
    .slice(1)
    .map((step) => step.replace(/~1/g, '/').replace(/~0/g, '~'));
const joined = (parts: string[]) => parts.map((part) => `/${part.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

function follow(document: JsonObject, ref: string): Json | undefined {
  let node: Json | undefined = document;
  for (const step of steps(ref.slice(1))) node = isObject(node) ? node[step] : undefined;
  return node;
}

/** A `$ref` alone (beside it nothing): the node is the component, whatever place holds it. */
const bareRef = (node: Json | undefined): string | undefined =>
  isObject(node) && typeof node['$ref'] === 'string' && node['$ref'].startsWith('#/') && Object.keys(node).length === 1
    ? node['$ref']
    : undefined;

/**
 * The component a pointer into the dereferenced document ends in, walking the document as written. Keywords beside
 * a `$ref` make that node the holder's own, so the walk stops entering components there; a pointer the written
 * document does not hold has no origin.
 */
export function originOf(document: JsonObject, pointer: string): Origin | undefined {
  const path = steps(pointer);
  let node: Json | undefined = document;
  let origin: Origin | undefined;
  let inner: string[] = [];
  const enter = (ref: string, at: number) => {
    node = follow(document, ref);
    if (ref.startsWith('#/components/')) {
      origin = { component: ref, inner: '', site: path.slice(0, at) };
      inner = [];
    }
  };
  for (const [index, step] of path.entries()) {
    const ref = bareRef(node);
    if (ref) enter(ref, index);
    if (!isObject(node) && !Array.isArray(node)) return undefined;
    node = Array.isArray(node) ? node[Number(step)] : node[step];
    if (node === undefined) return undefined;
    inner.push(step);
  }
  const last = bareRef(node);
  if (last) enter(last, path.length);
  return origin && { ...origin, inner: joined(inner) };
}

/** The place a site names, for people: "response 400", "request body", "header parameter `Idempotency-Key`". */
export function siteName(dereferenced: JsonObject, site: string[]): string {
  // paths, the path, then the method, or `parameters` of the path item.
  const start = site[2] === 'parameters' ? 2 : 3;
  const rest = site.slice(start);
  const words: string[] = [];
  let index = 0;
  const at = (offset: number) => rest[index + offset];
  if (at(0) === 'requestBody') {
    words.push('request body');
    index += 1;
  } else if (at(0) === 'responses' && at(1) !== undefined) {
    words.push(`response ${at(1)}`);
    index += 2;
    if (at(0) === 'headers' && at(1) !== undefined) {
      words.push(`header ${code(at(1)!)}`);
      index += 2;
    }
  } else if (at(0) === 'parameters' && at(1) !== undefined) {
    const parameter = follow(dereferenced, `#${joined(site.slice(0, start + index + 2))}`);
    words.push(
      isObject(parameter)
        ? `${String(parameter['in'])} parameter ${code(String(parameter['name']))}`
        : `parameter ${at(1)!}`,
    );
    index += 2;
  } else if (rest.length > 0) words.push(joined(rest));
  const property = rest
    .slice(index)
    .flatMap((step, position, all) =>
      all[position - 1] === 'properties' ? [`.${step}`] : step === 'items' ? ['[]'] : [],
    )
    .join('');
  return `${words.join(' ')}${property ? ` ${code(property.replace(/^\./, ''))}` : ''}`;
}

/** The components a change's place runs through decide which changes are one: the same rule there, the same values. */
export function sharedKey(change: Change, origin: Origin): string {
  return JSON.stringify([
    origin.component,
    origin.inner,
    change.side,
    change.rule,
    change.level,
    change.direction,
    change.reviewed ?? null,
    change.before ?? null,
    change.after ?? null,
  ]);
}

/** One place a shared component's change reaches. */
export interface Place {
  operationId: string;
  method: string;
  path: string;
  /** For people: "response 400", "request body `name`", "header parameter `Idempotency-Key`". */
  where: string;
  pointer: string;
}

/** One change of a shared component reaching several places: the text says it once. */
export interface SharedChange {
  /** The component, as a $ref: `#/components/schemas/Error`. */
  component: string;
  /** Where in the component ('' for the component itself). */
  pointer: string;
  /** The change at the first place (each place's own stays under its operation in `operations`). */
  change: Change;
  places: Place[];
}

/**
 * The changes of operations that are one change of a shared component (the same rule and values at the same place of
 * it) reaching two places or more, in the diff's order.
 */
export function sharedChanges(base: JsonObject, head: JsonObject, changes: Change[]): SharedChange[] {
  const documents = {
    base: { written: base, whole: dereference(base) },
    head: { written: head, whole: dereference(head) },
  };
  const groups = new Map<string, SharedChange>();
  for (const change of changes) {
    if (!change.operation) continue;
    const { written, whole } = documents[change.side];
    const origin = originOf(written, change.pointer);
    if (!origin) continue;
    const key = sharedKey(change, origin);
    const group = groups.get(key) ?? { component: origin.component, pointer: origin.inner, change, places: [] };
    group.places.push({ ...change.operation, where: siteName(whole, origin.site), pointer: change.pointer });
    groups.set(key, group);
  }
  return [...groups.values()].filter((group) => group.places.length > 1);
}

/** A place's change, as the operation lists hold it: by operation, pointer and rule. */
export const placeKey = (operation: { method: string; path: string }, pointer: string, rule: string) =>
  `${operation.method} ${operation.path} ${pointer} ${rule}`;

/** The per-operation changes the shared changes stand for, as placeKeys. */
export const placesOf = (shared: SharedChange[]): Set<string> =>
  new Set(shared.flatMap(({ change, places }) => places.map((place) => placeKey(place, place.pointer, change.rule))));

const kinds: Record<string, string> = {
  schemas: 'schema',
  responses: 'response',
  parameters: 'parameter',
  headers: 'header',
  requestBodies: 'request body',
};

/** The component for people: "schema `Error` (`/properties/message`)". */
export function componentName(component: string, pointer: string): string {
  const [, kind = '', name = component] = /^#\/components\/([^/]+)\/(.+)$/.exec(component) ?? [];
  return `${kinds[kind] ?? kind} ${code(name)}${pointer ? ` (${code(pointer)})` : ''}`;
}

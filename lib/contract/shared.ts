// Where a change of one place comes from: the shared component its pointer runs through, so the reviewer's report
// can say one change of a component once, with the places it reaches, instead of once per place.
import { isObject, type Json, type JsonObject } from '../openapi/dereference.js';
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

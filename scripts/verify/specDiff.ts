import { dereference, isObject, type Json, type JsonObject } from '../../lib/openapi/dereference.js';
import { toExactJson } from '../../generators/exactJson.js';

// Enough differences to tell one contract from another; the rest are counted.
const maxListed = 20;

function pointer(path: string[]): string {
  return path.length === 0
    ? '(the whole document)'
    : `/${path.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}

/** A value's JSON on one line, integers read with intAsBigInt written as their exact digits. */
const oneLine = (value: Json | undefined) =>
  value === undefined ? undefined : toExactJson(value).replace(/\n\s*/g, ' ');

const short = (value: Json | undefined) => {
  const text = oneLine(value);
  return text === undefined ? 'absent' : text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

function walk(local: Json | undefined, published: Json | undefined, path: string[], out: string[]): void {
  if (isObject(local) && isObject(published)) {
    for (const key of new Set([...Object.keys(local), ...Object.keys(published)]))
      walk(local[key], published[key], [...path, key], out);
    return;
  }
  if (Array.isArray(local) && Array.isArray(published) && local.length === published.length) {
    local.forEach((item, index) => {
      walk(item, published[index], [...path, String(index)], out);
    });
    return;
  }
  if (oneLine(local) !== oneLine(published))
    out.push(`${pointer(path)}: local ${short(local)}, published ${short(published)}`);
}

/**
 * The contract a document states: $refs resolved, so that moving a
 * definition into components (or back) is no difference; of the components
 * only the security schemes, which operations name instead of referencing.
 */
function stated(document: Json): Json {
  if (!isObject(document)) return document;
  const { components, ...rest } = dereference(document);
  const securitySchemes = isObject(components) ? components['securitySchemes'] : undefined;
  return securitySchemes === undefined ? rest : ({ ...rest, components: { securitySchemes } } as JsonObject);
}

/** Where the published contract differs from the local one, as JSON pointers; empty when they are the same. */
export function specDifferences(local: Json, published: Json): string[] {
  const out: string[] = [];
  walk(stated(local), stated(published), [], out);
  return out.length > maxListed ? [...out.slice(0, maxListed), `... and ${out.length - maxListed} more`] : out;
}

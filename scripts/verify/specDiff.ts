import { isObject, type Json } from '../../src/openapi/dereference.js';

// Enough differences to tell one contract from another; the rest are counted.
const maxListed = 20;

function pointer(path: string[]): string {
  return path.length === 0
    ? '(the whole document)'
    : `/${path.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}

const short = (value: Json | undefined) => {
  const text = JSON.stringify(value);
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
  if (JSON.stringify(local) !== JSON.stringify(published))
    out.push(`${pointer(path)}: local ${short(local)}, published ${short(published)}`);
}

/** Where the published contract differs from the local one, as JSON pointers; empty when they are the same. */
export function specDifferences(local: Json, published: Json): string[] {
  const out: string[] = [];
  walk(local, published, [], out);
  return out.length > maxListed ? [...out.slice(0, maxListed), `... and ${out.length - maxListed} more`] : out;
}

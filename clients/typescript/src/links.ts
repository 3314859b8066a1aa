// One link-value of a Link header (RFC 8288): <target> and its parameters, up to the next link-value.
const linkValue = /<([^>]*)>([^<]*)/g;
const relParameter = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))/i;

/** The target of the first link with the given relation type in a Link header, as written (maybe relative). */
export function linkTarget(header: string | null, rel: string): string | undefined {
  if (header === null) return undefined;
  for (const [, target, parameters] of header.matchAll(linkValue)) {
    const match = relParameter.exec(parameters ?? '');
    const relations = (match?.[1] ?? match?.[2] ?? '').toLowerCase().split(/\s+/);
    if (relations.includes(rel)) return target;
  }
  return undefined;
}

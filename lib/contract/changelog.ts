// The changelog's entries: the diff (lib/contract/diff.ts) for people, grouped by operation, each line with its
// rule id and level, so the changelog says what the gate judged.
import type { JsonObject } from '../openapi/dereference.js';
import type { Change } from './change.js';
import { diff } from './diff.js';
import { componentName, placeKey, placesOf, sharedChanges, type SharedChange } from './shared.js';
import { code } from './text.js';

const versionOf = (document: JsonObject) => String((document['info'] as JsonObject | undefined)?.['version']);

const operationKey = (change: Change) =>
  change.operation ? `${change.operation.method} ${change.operation.path}` : undefined;

/** One entry: the message, then the rule and level (and the review that accepted it). */
export const entry = (change: Change) =>
  `- ${change.message} (${change.level}: ${code(change.rule)}${change.reviewed ? ', reviewed' : ''})`;

/** The most places a shared change names; the count says the rest. */
const placesNamed = 12;

/**
 * One change of a shared component, once: the component in place of the first place it reaches, what changed, then
 * the places ("used by listPets response 400, ... (18 places)").
 */
function sharedEntry({ component, pointer, change, places }: SharedChange): string {
  // The message names the first place ("response `400` body `message`: ..."); the component takes its place. A
  // change of the whole component (a shared response added) keeps its sentence and names the component after it.
  const colon = change.message.indexOf(': ');
  const message =
    pointer === '' || colon === -1
      ? `${change.message}, the shared ${componentName(component, pointer)}`
      : `${componentName(component, pointer)}: ${change.message.slice(colon + 2)}`;
  const named = places.slice(0, placesNamed).map((place) => `${place.operationId} ${place.where}`);
  if (places.length > placesNamed) named.push('…');
  return entry({ ...change, message }).replace(/\)$/, `; used by ${named.join(', ')}: ${places.length} places)`);
}

/** What changed from one contract to the next, as the Markdown entries of a changelog section. */
export function changes(base: JsonObject, head: JsonObject, list: Change[] = diff(base, head)): string {
  const out = [`Changes to the contract since ${versionOf(base)}.`, '', '### Operations', ''];
  const lifecycle = list.filter((change) => /^(endpoint-added|endpoint-deprecated|api-removed-)/.test(change.rule));
  if (lifecycle.length === 0) out.push('No operation added, removed or deprecated.');
  for (const change of lifecycle) {
    const { operation } = change;
    if (!operation) continue;
    const name = `${code(`${operation.method} ${operation.path}`)} (${operation.operationId})`;
    const verb =
      change.rule === 'endpoint-added' ? 'Added' : change.rule === 'endpoint-deprecated' ? 'Deprecated' : 'Removed';
    const detail = verb === 'Deprecated' ? `, ${change.message.replace(/^deprecated, /, '')}` : '';
    out.push(`- ${verb} ${name}${detail}. (${change.level}: ${code(change.rule)})`);
  }
  out.push('');
  // A change of a shared component is said once, with the places it reaches, not once under each operation.
  const shared = sharedChanges(
    base,
    head,
    list.filter((change) => !lifecycle.includes(change)),
  );
  if (shared.length > 0) out.push('### Shared components', '', ...shared.map(sharedEntry), '');
  const grouped = placesOf(shared);
  const byOperation = new Map<string, Change[]>();
  for (const change of list) {
    const key = operationKey(change);
    if (!key || lifecycle.includes(change)) continue;
    if (grouped.has(placeKey(change.operation!, change.pointer, change.rule))) continue;
    byOperation.set(key, [...(byOperation.get(key) ?? []), change]);
  }
  for (const [key, changes] of byOperation) {
    const operationId = changes[0]?.operation?.operationId ?? '';
    out.push(`### ${code(key)} (${operationId})`, '', ...changes.map(entry), '');
  }
  const components = list.filter((change) => !change.operation);
  out.push(
    // Servers are here too: they belong to no operation, and a move of one is a change every client meets.
    '### Servers and components',
    '',
    ...(components.length > 0 ? components.map(entry) : ['No server or component changed.']),
    '',
  );
  return `${out.join('\n').trimEnd()}\n`;
}

/** A changelog section: its heading, then changes(). */
export function changelog(base: JsonObject, head: JsonObject): string {
  return `## ${versionOf(head)}\n\n${changes(base, head)}`;
}

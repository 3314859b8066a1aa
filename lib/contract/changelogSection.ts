// The CHANGELOG.md section of the version under way. Its entries are what changed against the last release
// (lib/contract/changelog.ts, a view of lib/contract/diff.ts), generated between markers; the summary above them is a writer's. A
// released version's section is history and is never rewritten.
import type { JsonObject } from '../openapi/dereference.js';
import { changes } from './changelog.js';
import { blockContent, withBlock } from '../generatedBlocks.js';

/** What a new section's summary says until someone writes one; the gate refuses it (scripts/contract/version.ts). */
export const summaryPlaceholder = 'Summary: (to write: what changed for consumers, and why)';

export const changesBlock = (version: string) => `changes in ${version}`;
export const unreleasedHeading = (version: string) => `## ${version} (unreleased)`;

const headingOf = (version: string) => new RegExp(`^## ${version.replace(/\./g, '\\.')}(?: .*)?$`, 'm');

/** The section of `version` in the changelog: from its heading to the next "## " heading; undefined without one. */
export function sectionOf(changelog: string, version: string): string | undefined {
  const start = changelog.search(headingOf(version));
  if (start === -1) return undefined;
  const next = changelog.slice(start + 1).search(/^## /m);
  return next === -1 ? changelog.slice(start) : changelog.slice(start, start + 1 + next);
}

/** The changelog with the section of the unreleased `after` version holding the entries since `before`. */
export function withUnreleasedSection(changelog: string, before: JsonObject, after: JsonObject): string {
  const version = String((after['info'] as JsonObject)['version']);
  const block = changesBlock(version);
  const entries = changes(before, after);
  const fresh = `<!-- BEGIN generated: ${block} -->\n<!-- END generated: ${block} -->`;
  const section = sectionOf(changelog, version);
  if (section === undefined) {
    const first = changelog.search(/^## /m);
    const created = `${unreleasedHeading(version)}\n\n${summaryPlaceholder}\n\n${fresh}\n\n`;
    const at = first === -1 ? changelog.length : first;
    return withBlock(`${changelog.slice(0, at)}${created}${changelog.slice(at)}`, block, entries, 'CHANGELOG.md');
  }
  let rewritten = section.replace(headingOf(version), unreleasedHeading(version));
  if (blockContent(rewritten, block) === undefined) rewritten = `${rewritten.trimEnd()}\n\n${fresh}\n\n`;
  const written = withBlock(rewritten, block, entries, 'CHANGELOG.md');
  return changelog.replace(section, () => written);
}

// The review's section on the first-party client's source: one sentence per exported name removed or added, for the
// developer whose code names it, and what each declaration that changed was and became (its change on the wire is
// judged with the operations). A removed name whose successor has the same shape is named as a rename, with the way
// the contract can keep the old name.
import { code, inline } from '../../lib/contract/text.js';
import type { ClientChanges, DeclarationChange } from './clientDeclarations.js';

type Kind = 'method' | 'property' | 'type' | 'export';

const memberOf = (name: string) => name.slice(name.lastIndexOf('.') + 1);
const textOf = (change: DeclarationChange) => (change.before ?? change.after ?? '').replace(/^@deprecated /, '');

function kindOf(change: DeclarationChange): Kind {
  const text = textOf(change);
  if (change.name.includes('.')) return text.startsWith(`${memberOf(change.name)}(`) ? 'method' : 'property';
  return /^(type|interface) /.test(text) ? 'type' : 'export';
}

const capitalized = (name: string) => `${name.charAt(0).toUpperCase()}${name.slice(1)}`;

/**
 * The declaration without its own name (and, for a method, without the names of the types generated for its
 * operation: `getPet` answers `GetPetResult`): two with the same shape differ by name alone.
 */
function shapeOf(change: DeclarationChange): string {
  const name = memberOf(change.name);
  const spelled = textOf(change).split(name).join('\0');
  return change.name.includes('.') ? spelled.split(capitalized(name)).join('\0') : spelled;
}

const nouns: Record<Kind, string> = { method: 'method', property: 'property', type: 'type', export: 'export' };

function removedLine(removed: DeclarationChange, added: DeclarationChange[]): string {
  const kind = kindOf(removed);
  const successor = added.find((candidate) => kindOf(candidate) === kind && shapeOf(candidate) === shapeOf(removed));
  const uses = kind === 'method' ? 'calls to it stop compiling' : 'code that names it stops compiling';
  const head = `- **breaking**: the ${nouns[kind]} ${code(removed.name)} is gone, so ${uses}`;
  if (!successor) return `${head}; it was ${inline(removed.before ?? '')}.`;
  const same = kind === 'method' ? 'takes and answers the same: call it instead' : 'is the same: use it instead';
  const alias =
    removed.schema && successor.schema
      ? ` If only the schema was renamed, keeping ${code(memberOf(removed.name))} in \`components/schemas\` as a schema that is only a \`$ref\` to ${code(successor.name)} keeps this name in the client (no major step).`
      : '';
  return `${head}; ${code(successor.name)} ${same}.${alias}`;
}

/** Only its deprecation changed: the generator marks a former name kept as a bare `$ref` (clientSource.ts). */
const deprecatedNow = (before = '', after = '') =>
  after.startsWith('@deprecated ') &&
  !before.startsWith('@deprecated ') &&
  after.slice('@deprecated '.length) === before;

/**
 * A name newly marked `@deprecated`: a former schema name kept as a bare `$ref` names its successor; a method is an
 * operation deprecated on the wire, whose calls keep compiling but fail once the service passes its sunset.
 */
function deprecatedLine(name: string, after: string): string {
  if (kindOf({ name, after, level: 'none' }) === 'method')
    return `- deprecated ${code(name)}: calls to it still compile, but fail with 410 once the service passes the operation's sunset (judged on the wire, above); move to the replacement its \`@deprecated\` note names, if it names one.`;
  return `- deprecated ${code(name)}: code that names it still compiles; move it to the name its \`@deprecated\` note gives.`;
}

/** The section's lines: the generator's refusal of a side, or each removed, added and changed declaration. */
export function clientLines(client: ClientChanges): string[] {
  const refusals = (['base', 'head'] as const).flatMap((side) => {
    const reason = client.refused[side];
    return reason === undefined ? [] : [`- **the generator refuses the ${side}**: ${reason}`];
  });
  if (refusals.length > 0) return refusals;
  const lines = [
    ...client.removed.map((removed) => removedLine(removed, client.added)),
    ...client.added.map(
      (added) => `- additive: a new ${nouns[kindOf(added)]} ${code(added.name)}: ${inline(added.after ?? '')}`,
    ),
    ...client.changed.flatMap(({ name, before, after }) =>
      deprecatedNow(before, after)
        ? [deprecatedLine(name, after ?? '')]
        : [
            `- changed ${code(name)} (what it does to calls is judged on the wire, above):`,
            `  - before: ${inline(before ?? '')}`,
            `  - after: ${inline(after ?? '')}`,
          ],
    ),
  ];
  return lines.length > 0 ? lines : ['No declaration of the client changes.'];
}

import type { Json } from '../openapi/dereference.js';
import type { CounterExample, IgnoredExample } from './change.js';

export const code = (text: string) => `\`${text}\``;

/**
 * Longest object or list a change's sentence quotes whole (a keyword's value before and after): a longer one,
 * such as the schemas under a composition keyword, shows its start and its length, so a review line stays
 * readable and postable; the change's `before` and `after` (--json) carry it whole. A text or a number (a
 * pattern, a bound) is always quoted whole: a consumer may need it exactly.
 */
const maxLiteralText = 160;

/**
 * A JSON value as inline code: a pattern's brackets and parentheses would
 * otherwise read as a Markdown link. The fence is one backtick longer than
 * the longest run inside (CommonMark's rule), padded when it starts or ends with one.
 */
export function literal(value: Json | undefined): string {
  if (value === undefined) return inline('none');
  const json = JSON.stringify(value);
  if (json.length <= maxLiteralText || typeof value !== 'object' || value === null) return inline(json);
  return `${inline(`${json.slice(0, maxLiteralText - 40)}…`)} (${count(json.length)} characters of JSON)`;
}

/** Text as inline code, whatever backticks it holds. */
export function inline(text: string): string {
  const longestRun = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longestRun + 1);
  const padding = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${padding}${text}${padding}${fence}`;
}

/** One step of a JSON pointer (RFC 6901). */
export const pointerStep = (key: string | number) => `/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;

/** Longest text an example shows whole; a longer one shows its start and its length. */
export const maxExampleText = 60;

/** A count as people read it: 1,024. */
export const count = (n: number) => n.toLocaleString('en-US');

/** JSON, each text longer than `maxExampleText` written as its start, an ellipsis, and its length. */
function bounded(value: Json): string {
  if (typeof value === 'string') {
    const characters = [...value];
    if (characters.length <= maxExampleText) return JSON.stringify(value);
    const start = JSON.stringify(characters.slice(0, maxExampleText - 20).join(''));
    return `${start.slice(0, -1)}…" (${count(characters.length)} characters)`;
  }
  if (Array.isArray(value)) return `[${value.map(bounded).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([key, item]) => `${bounded(key)}:${bounded(item)}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/**
 * An example or counter-example value as inline code, its long texts cut to their start and length
 * (`"aaaa…" (1,001 characters)`): what every "for example" line prints. The change carries the value whole.
 */
export const example = (value: Json): string => inline(bounded(value));

/**
 * "for example `…`: accepted by the base and by the head, which ignores `name` in it": the example of a request
 * property the head no longer reads, named by the last step of the change's pointer (into the base).
 */
export const forIgnored = ({ value }: IgnoredExample, pointer: string): string => {
  const property = (pointer.split('/').pop() ?? '').replace(/~1/g, '/').replace(/~0/g, '~');
  return `for example ${example(value)}: accepted by the base and by the head, which ignores ${code(property)} in it`;
};

/** "for example `…`: accepted by the base, refused by the head": a counter-example as every report writes it. */
export const forExample = ({ value, acceptedBy, refusedBy }: CounterExample): string =>
  `for example ${example(value)}: accepted by the ${acceptedBy}, refused by the ${refusedBy}`;

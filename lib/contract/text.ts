import type { Json } from '../openapi/dereference.js';

export const code = (text: string) => `\`${text}\``;

/**
 * A JSON value as inline code: a pattern's brackets and parentheses would
 * otherwise read as a Markdown link. The fence is one backtick longer than
 * the longest run inside (CommonMark's rule), padded when it starts or ends with one.
 */
export function literal(value: Json | undefined): string {
  return inline(value === undefined ? 'none' : JSON.stringify(value));
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

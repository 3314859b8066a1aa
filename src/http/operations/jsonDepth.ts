import { invalidRequest } from '../../errors.js';

/**
 * How deep a JSON body may nest arrays and objects. The contract's deepest
 * body is one object; 32 leaves room for any body it may grow while every
 * walk of a parsed body (validation, the surrogate check, logging, hashing
 * an idempotent request) stays far from the stack's end, whatever the walk.
 * docs/api.md states it.
 */
export const maxJsonDepth = 32;

const quote = 0x22;
const backslash = 0x5c;
const opening = new Set([0x5b, 0x7b]);
const closing = new Set([0x5d, 0x7d]);

/** The deepest nesting of arrays and objects in the text, read without parsing it (strings skipped). */
export function nestingDepth(text: string, stopPast = Infinity): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length && deepest <= stopPast; index += 1) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === backslash) index += 1;
      else if (char === quote) inString = false;
    } else if (char === quote) inString = true;
    else if (opening.has(char)) deepest = Math.max(deepest, (depth += 1));
    else if (closing.has(char)) depth -= 1;
  }
  return deepest;
}

/**
 * Refuses a body nested deeper than maxJsonDepth before it is parsed, so no
 * later step, recursive or not, ever meets one (a 400, not a stack overflow's 500).
 */
export function assertDepthWithin(text: string): void {
  if (nestingDepth(text, maxJsonDepth) <= maxJsonDepth) return;
  throw invalidRequest(`The request body nests arrays and objects more than ${maxJsonDepth} deep.`);
}

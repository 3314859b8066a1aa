import { invalidRequest } from '../../errors.js';

/** A UTF-16 surrogate escape in JSON text (\uD800 to \uDFFF); only escapes can make one, the bytes are UTF-8. */
const surrogateEscape = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const unpaired = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Walks the value with a queue of its own, not the call stack: however deep the value, no overflow. */
function findUnpaired(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === 'string') {
      if (unpaired.test(item)) return true;
    } else if (Array.isArray(item)) for (const child of item as unknown[]) pending.push(child);
    else if (typeof item === 'object' && item !== null) {
      for (const [key, child] of Object.entries(item)) {
        if (unpaired.test(key)) return true;
        pending.push(child);
      }
    }
  }
  return false;
}

/**
 * Refuses a JSON body holding a string with an unpaired UTF-16 surrogate
 * ("\ud800"): it is no Unicode text, could not be stored as sent (PostgreSQL
 * would hold U+FFFD), and I-JSON (RFC 7493, 2.1) forbids it. No portable
 * `pattern` can say so (openapi.yaml, PetName), so the service does, for
 * every string of every body. The walk runs only when the text holds such an
 * escape at all.
 */
export function assertNoUnpairedSurrogates(text: string, parsed: unknown): void {
  if (!surrogateEscape.test(text) || !findUnpaired(parsed)) return;
  throw invalidRequest(
    'The request body holds a string with an unpaired UTF-16 surrogate (\\ud800 to \\udfff alone), which is not Unicode text.',
  );
}

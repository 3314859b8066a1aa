// Reading a 2xx answer as the contract declares it: its body by its Content-Type, its declared headers by
// their schema's type. What the contract does not declare is reported, for the caller to throw as
// `unexpected_response`, never guessed at.
import type { Answer } from './exchange.js';
import { codecOf, covers, decode, essence } from './mediaTypes.js';
import type { OperationSpec, SuccessSpec } from './operationSpec.js';

/** A reading, or why the answer is not what the contract declares. */
export type Reading<T> = { readonly value: T } | { readonly unexpected: string };

/** The answer's body: undefined for a status declared without one; else decoded by its Content-Type. */
export function readBody(spec: OperationSpec, answer: Answer): Reading<unknown> {
  const success: SuccessSpec | undefined = spec.success[answer.status];
  if (success === undefined) return { unexpected: `HTTP ${answer.status}, a status the contract does not declare` };
  const declared = success.content ?? [];
  if (declared.length === 0) return { value: undefined };
  const type = essence(answer.headers.get('content-type'));
  // Without a Content-Type, the one declared type is the only reading the contract allows.
  const mediaType = type === undefined ? (declared.length === 1 ? declared[0] : undefined) : type;
  const codec = mediaType === undefined ? undefined : codecOf(mediaType);
  if (mediaType === undefined || codec === undefined || !declared.some((range) => covers(range, mediaType)))
    return { unexpected: `HTTP ${answer.status} in ${type ?? 'no Content-Type'}, not ${declared.join(' or ')}` };
  try {
    return { value: decode(codec, answer.bytes) };
  } catch {
    return { unexpected: `HTTP ${answer.status} with a body that is not ${mediaType}` };
  }
}

/** A header's value as its schema types it. */
function typed(value: string, type: 'string' | 'number' | 'boolean'): Reading<string | number | boolean> {
  if (type === 'string') return { value };
  if (type === 'boolean')
    return value === 'true' || value === 'false' ? { value: value === 'true' } : { unexpected: value };
  const number = Number(value);
  return value.trim() === '' || Number.isNaN(number) ? { unexpected: value } : { value: number };
}

/**
 * The headers the answer's status declares that it carries, under their declared names: an optional one
 * absent is left out; a required one absent, or a value that does not read as its type, is unexpected (in a
 * browser, a header the service does not expose to scripts through CORS is absent).
 */
export function readHeaders(spec: OperationSpec, answer: Answer): Reading<Record<string, string | number | boolean>> {
  const headers: Record<string, string | number | boolean> = {};
  for (const [name, { type, required }] of Object.entries(spec.success[answer.status]?.headers ?? {})) {
    const raw = answer.headers.get(name);
    if (raw === null && required === true) return { unexpected: `HTTP ${answer.status} without its header ${name}` };
    if (raw === null) continue;
    const reading = typed(raw, type);
    if ('unexpected' in reading) return { unexpected: `header ${name}: ${raw} is not a ${type}` };
    headers[name] = reading.value;
  }
  return { value: headers };
}

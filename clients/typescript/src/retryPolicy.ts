// When a request is sent again, and after how long. Modelled on what Stainless-generated clients
// (openai-node) decide, narrowed to what this service's contract says: 408, 429, 502, 503 and 504 mean
// "not processed, try again"; 409 idempotency_key_in_use means "the first attempt is still running";
// a 500 is a bug, and sending it again would not fix it.

/** The methods of RFC 9110 (and PATCH, RFC 5789) an operation may use. */
export type HttpMethod = 'GET' | 'HEAD' | 'OPTIONS' | 'TRACE' | 'PUT' | 'DELETE' | 'POST' | 'PATCH';

const retryableStatuses: ReadonlySet<number> = new Set([408, 429, 502, 503, 504]);

/** Ceiling of the first retry's wait; each retry doubles it (exponential backoff). */
export const initialBackoffMs = 500;
/** Largest ceiling of a wait without Retry-After: past 8 s, waiting longer rarely helps a caller waiting on us. */
export const maxBackoffMs = 8_000;
/**
 * The longest Retry-After the client honours (the service's rate limit window is 60 s by default). A longer
 * one is not shortened, which would send the request before the service said it can take it: the error is
 * thrown instead.
 */
export const maxRetryAfterMs = 60_000;

/** Whether an answer invites the same request again (given the request may be repeated at all). */
export function isRetryableAnswer(status: number, code: string | undefined): boolean {
  return retryableStatuses.has(status) || (status === 409 && code === 'idempotency_key_in_use');
}

/** The idempotent methods of RFC 9110 9.2.2: the safe ones, PUT and DELETE. Sending one twice does what once does. */
const idempotentMethods: ReadonlySet<HttpMethod> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/**
 * Whether a request may be sent twice: one of an idempotent method always; a POST or PATCH only when its
 * operation declares an Idempotency-Key (and the request carries one), so that the service applies it once.
 */
export function isRepeatable(method: HttpMethod, declaresIdempotencyKey: boolean): boolean {
  return idempotentMethods.has(method) || declaresIdempotencyKey;
}

/**
 * The wait before retry number `retry` (0 for the first) with "full jitter": anywhere between 0 and the
 * exponential ceiling, so that clients turned away together do not come back together.
 */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  return random() * Math.min(maxBackoffMs, initialBackoffMs * 2 ** retry);
}

/** Retry-After (RFC 9110 10.2.3) in milliseconds from now: delay-seconds or an HTTP-date; undefined if absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * How long to wait before sending again, or undefined to stop: the service's Retry-After when it gave one
 * (but never less than the jittered backoff), else the backoff alone.
 */
export function retryWaitMs(retry: number, retryAfter: number | undefined): number | undefined {
  if (retryAfter !== undefined && retryAfter > maxRetryAfterMs) return undefined;
  return Math.max(retryAfter ?? 0, backoffMs(retry));
}

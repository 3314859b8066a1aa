import { sleep, startCall } from './deadline.js';
import { errorObjectOf } from './errors.js';
import { isRepeatable, isRetryableAnswer, retryAfterMs, retryWaitMs, type HttpMethod } from './retryPolicy.js';

/** How requests travel: the fetch to use, each call's deadline and how many times a call may retry. */
export interface Transport {
  readonly fetch: typeof fetch;
  readonly timeoutMs: number;
  readonly maxRetries: number;
}

export interface Outgoing {
  readonly method: HttpMethod;
  /** Whether the operation declares an Idempotency-Key header (then this request carries one). */
  readonly declaresIdempotencyKey: boolean;
  readonly url: URL;
  /** Sent unchanged on every attempt, Idempotency-Key included. */
  readonly headers: Record<string, string>;
  /** Sent unchanged on every attempt: JSON text, or bytes and text as the caller gave them. */
  readonly body?: RequestInit['body'];
}

/** The service's answer, its body read: as bytes, and as text for the Error object. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly bytes: Uint8Array;
  readonly text: string;
  /** fetch's Response, its body already read. */
  readonly response: Response;
}

/** An attempt's outcome: an answer, or the error of a connection that gave none (refused, reset, cut mid-body). */
type Outcome = Answer | { readonly failure: unknown };

async function attempt(fetchImpl: typeof fetch, outgoing: Outgoing, signal: AbortSignal): Promise<Outcome> {
  try {
    const init: RequestInit = { method: outgoing.method, headers: outgoing.headers, signal };
    if (outgoing.body !== undefined) init.body = outgoing.body;
    const response = await fetchImpl(outgoing.url, init);
    const bytes = new Uint8Array(await response.arrayBuffer());
    const text = new TextDecoder().decode(bytes);
    return { status: response.status, headers: response.headers, bytes, text, response };
  } catch (failure) {
    return { failure };
  }
}

/** How long to wait before sending the request again after this outcome, or undefined when it is final. */
function waitBeforeRetry(outgoing: Outgoing, outcome: Outcome, retry: number): number | undefined {
  if (!isRepeatable(outgoing.method, outgoing.declaresIdempotencyKey)) return undefined;
  if ('failure' in outcome) return retryWaitMs(retry, undefined);
  if (!isRetryableAnswer(outcome.status, errorObjectOf(outcome.text)?.code)) return undefined;
  return retryWaitMs(retry, retryAfterMs(outcome.headers.get('retry-after'), Date.now()));
}

/**
 * Sends a request until its answer is final: retries what the retry policy allows, at most maxRetries
 * times, never past the call's deadline (a wait that would end after it is not started: the last answer
 * stands). Resolves with the last answer, whatever its status. Throws the caller's abort reason once its
 * signal aborts, a TimeoutError at the deadline, or the last connection error; none of those is retried
 * after the call has ended.
 */
export async function exchange(transport: Transport, outgoing: Outgoing, signal?: AbortSignal): Promise<Answer> {
  const call = startCall(transport.timeoutMs, signal);
  try {
    for (let retry = 0; ; retry++) {
      call.signal.throwIfAborted();
      const outcome = await attempt(transport.fetch, outgoing, call.signal);
      call.signal.throwIfAborted();
      const wait = retry < transport.maxRetries ? waitBeforeRetry(outgoing, outcome, retry) : undefined;
      if (wait === undefined || Date.now() + wait >= call.deadline) {
        if ('failure' in outcome) throw outcome.failure;
        return outcome;
      }
      await sleep(wait, call.signal);
    }
  } finally {
    call.end();
  }
}

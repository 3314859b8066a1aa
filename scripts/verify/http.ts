import { setTimeout as sleep } from 'node:timers/promises';
import type { Findings } from './findings.js';

/** A request as sent: method, absolute URL, headers and the raw body. */
export interface OutgoingRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** Text, or bytes sent as they are (no Content-Type of fetch's own). */
  body?: string | Uint8Array;
}

export interface ReceivedResponse {
  status: number;
  headers: Headers;
  /** The body decoded as UTF-8, for messages and JSON. */
  text: string;
  /** The body byte for byte, for a body in a bytes media type (which need be no UTF-8). */
  bytes?: Uint8Array;
}

// How long one answer may take before the run calls the deployment unresponsive.
const responseTimeoutMs = 30_000;
// A 429 or 503 is retried after its Retry-After this many times; then it is
// recorded as the answer (both are declared, so it is checked, not failed).
const maxRetries = 3;
// A Retry-After longer than this is not waited for: the run records the
// answer instead of stalling a deploy pipeline for minutes.
const maxWaitSeconds = 60;
// Without a Retry-After, a 429 or 503 is retried after this long.
const defaultWaitSeconds = 1;

function retryAfterSeconds(value: string | null): number {
  if (value === null) return defaultWaitSeconds;
  const seconds = /^\s*\d+\s*$/.test(value) ? Number(value) : (Date.parse(value) - Date.now()) / 1000;
  return Number.isFinite(seconds) ? Math.max(0, seconds) : defaultWaitSeconds;
}

/**
 * One request at a time, never more than the budget, and a 429 or 503 waited
 * out as its Retry-After asks: a verification run must not be what overloads
 * production.
 */
export class PoliteClient {
  /** Set once a request got 429 or 503 after every retry: from then on such answers are recorded, not waited out. */
  private persistentRefusal = false;

  constructor(
    private readonly findings: Findings,
    private readonly maxRequests: number,
    private readonly wait: (seconds: number) => Promise<void> = (seconds) =>
      sleep(seconds * 1000).then(() => undefined),
  ) {}

  get remaining(): number {
    return this.maxRequests - this.findings.sent;
  }

  /** The response, or undefined when the budget is spent before it could be sent. */
  async send(request: OutgoingRequest): Promise<ReceivedResponse | undefined> {
    for (let attempt = 0; ; attempt += 1) {
      if (this.remaining <= 0) return undefined;
      this.findings.sent += 1;
      const response = await fetch(request.url, {
        method: request.method,
        headers: request.headers,
        redirect: 'manual',
        signal: AbortSignal.timeout(responseTimeoutMs),
        ...(request.body === undefined ? {} : { body: request.body }),
      });
      const bytes = new Uint8Array(await response.arrayBuffer());
      const text = new TextDecoder().decode(bytes);
      const received = { status: response.status, headers: response.headers, text, bytes };
      if (received.status !== 429 && received.status !== 503) return received;
      if (attempt >= maxRetries || this.persistentRefusal) {
        if (!this.persistentRefusal)
          this.findings.notes.push(
            `${request.method} ${request.url} still answered ${received.status} after ${maxRetries} retries; later ones are not retried`,
          );
        this.persistentRefusal = true;
        return received;
      }
      const seconds = retryAfterSeconds(received.headers.get('retry-after'));
      if (seconds > maxWaitSeconds || this.remaining <= 0) return received;
      this.findings.retried += 1;
      await this.wait(seconds);
    }
  }
}

import type { OperationId } from './errors.js';
import { linkTarget } from './links.js';

/** What the service said about a deprecated operation (RFC 9745 Deprecation, RFC 8594 Sunset, Link). */
export interface DeprecationNotice {
  readonly operation: OperationId;
  /** When it was deprecated (the Deprecation header). */
  readonly deprecatedAt: Date | undefined;
  /** When it stops working (the Sunset header). */
  readonly sunset: Date | undefined;
  /** The absolute URL of the call that replaces it (Link rel="successor-version"). */
  readonly successor: string | undefined;
  /** Where its deprecation is documented (Link rel="deprecation"). */
  readonly documentation: string | undefined;
}

export type DeprecationHandler = (notice: DeprecationNotice) => void;

/** The default handler: one console.warn per operation. */
export const warnOnce: DeprecationHandler = (notice) => {
  const until = notice.sunset ? `; it stops working on ${notice.sunset.toUTCString()}` : '';
  const instead = notice.successor ? `; use ${notice.successor} instead` : '';
  console.warn(`pet-store-client: ${notice.operation} is deprecated${until}${instead}.`);
};

function dateOf(text: string | null): Date | undefined {
  if (text === null) return undefined;
  const date = /^@-?\d+$/.test(text) ? new Date(Number(text.slice(1)) * 1000) : new Date(text);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** An absolute URL for a link relative to the service (its origin), if the header has that relation. */
export function resolvedLink(headers: Headers, rel: string, base: URL): string | undefined {
  const target = linkTarget(headers.get('link'), rel);
  return target === undefined ? undefined : new URL(target, base).href;
}

/** Tells the handler about each deprecated operation once, the first time an answer says so. */
export class DeprecationWatch {
  readonly #told = new Set<OperationId>();

  constructor(
    private readonly handler: DeprecationHandler,
    private readonly base: URL,
  ) {}

  observe(operation: OperationId, headers: Headers): void {
    if (this.#told.has(operation)) return;
    const deprecation = headers.get('deprecation');
    const sunset = headers.get('sunset');
    if (deprecation === null && sunset === null) return;
    this.#told.add(operation);
    this.handler({
      operation,
      deprecatedAt: dateOf(deprecation),
      sunset: dateOf(sunset),
      successor: resolvedLink(headers, 'successor-version', this.base),
      documentation: resolvedLink(headers, 'deprecation', this.base),
    });
  }
}

// One change between two contracts, as every reader (the verdict, the changelog, the reviewer's report) sees it.
// Types only: this file can never sit in an import circle.
import type { Json } from '../openapi/dereference.js';

/**
 * breaking: a client written against the base can fail (the gate refuses it in a minor version).
 * warning: a client keeps working but should look (a deprecation, an optional response field removed).
 * additive: something new a client may use. none: documentation, objectives, the contract's own notes.
 */
export type Level = 'breaking' | 'warning' | 'additive' | 'none';

/** Which message the change is in: what a client sends, what it receives, or neither (the operation itself). */
export type Direction = 'request' | 'response' | 'none';

export interface OperationRef {
  operationId: string;
  /** Upper case: GET, POST, ... */
  method: string;
  path: string;
}

export interface Change {
  /** Named after oasdiff's rule ids where oasdiff has the rule (response-header-removed, ...). */
  rule: string;
  level: Level;
  direction: Direction;
  /** The operation changed; absent for a change to components alone (a schema added, a security scheme). */
  operation?: OperationRef;
  /** JSON pointer into the dereferenced head, or into the base when the thing was removed. */
  pointer: string;
  side: 'head' | 'base';
  /** One line for people: where, and what it was and is ("query parameter `limit`: maximum `100` → `50`"). */
  message: string;
  before?: Json;
  after?: Json;
  /** Why a change that would be breaking is accepted (lib/contract/reviewed.ts). */
  reviewed?: string;
  /** One sentence in the consumer's words: what a client written against the base meets now. */
  consumer: string;
  /**
   * A value that shows a schema change: one the base accepted and the head refuses (requests), or one the head may
   * send and the base did not allow (responses); or, for a widening, the reverse.
   */
  counterExample?: CounterExample;
  /**
   * A request property the head no longer reads, where it accepts unknown fields: a value sending it that both
   * accept, the head ignoring the property (the warning's example; refused by the head, it would be breaking).
   */
  ignoredExample?: IgnoredExample;
}

export interface IgnoredExample {
  value: Json;
  ignoredBy: 'head';
}

export interface CounterExample {
  value: Json;
  acceptedBy: 'base' | 'head';
  refusedBy: 'base' | 'head';
}

/** What the diff is judged against: `today` (YYYY-MM-DD) decides which sunsets have passed. */
export interface DiffOptions {
  today?: string;
}

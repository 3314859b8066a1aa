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
  /** One sentence in the consumer's words ("Requests whose `name` is only spaces are now refused with 400."). */
  consumer?: string;
  /** A value one side accepts and the other refuses, when the change narrows what is admitted. */
  counterExample?: { value: Json; acceptedBy: 'base' | 'head'; refusedBy: 'base' | 'head' };
}

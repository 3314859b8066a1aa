// A checked answer, as the exchanger hands it on: a type file, so the verify steps and the exchanger share it
// without importing each other.
import type { ReceivedResponse } from './http.js';

export interface Answer extends ReceivedResponse {
  json?: unknown;
  /** The request as a curl line, for any failure found in this answer later. */
  curl: string;
}

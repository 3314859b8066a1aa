/** What a verification run saw: every response counted per (operation, status), and every failure with its request. */

export interface Failure {
  /** The operation, or the run-wide check ("published contract"). */
  subject: string;
  /** The status of the response at fault, when a response is. */
  status?: number;
  /** What broke, in a few words: "required header missing", "undeclared status", ... */
  check: string;
  message: string;
  /** A curl command line that sends the request again. */
  curl?: string;
}

export interface Row {
  operationId: string;
  status: number;
  responses: number;
  failed: number;
  /** Response headers openapi.yaml does not declare for this (operation, status). */
  undeclaredHeaders: Set<string>;
}

export class Findings {
  readonly rows = new Map<string, Row>();
  readonly failures: Failure[] = [];
  /** Things worth saying that are not failures (an empty catalogue, a step skipped for budget). */
  readonly notes: string[] = [];
  /** What the run created (write mode), per operation that made it. */
  readonly createdBy = new Map<string, number>();
  /** Requests sent, retries included. */
  sent = 0;
  /** Requests sent again after a 429 or 503. */
  retried = 0;

  /** Counts a resource an operation created. */
  made(operationId: string): void {
    this.createdBy.set(operationId, (this.createdBy.get(operationId) ?? 0) + 1);
  }

  /** Resources the run created, of every kind. */
  get created(): number {
    return [...this.createdBy.values()].reduce((sum, count) => sum + count, 0);
  }

  row(operationId: string, status: number): Row {
    const key = `${operationId} ${status}`;
    let row = this.rows.get(key);
    if (row === undefined) {
      row = { operationId, status, responses: 0, failed: 0, undeclaredHeaders: new Set() };
      this.rows.set(key, row);
    }
    return row;
  }

  fail(failure: Failure): void {
    this.failures.push(failure);
  }

  get passed(): boolean {
    return this.failures.length === 0;
  }
}

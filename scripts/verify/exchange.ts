import type { TestRequest } from '../../lib/conformance/checks.js';
import type { Operation } from '../../lib/conformance/spec.js';
import { parseJson, responseProblems, undeclaredHeaders, type Problem } from './checks.js';
import { curlLine } from './curl.js';
import type { Findings } from './findings.js';
import type { OutgoingRequest, PoliteClient, ReceivedResponse } from './http.js';

export interface Answer extends ReceivedResponse {
  json?: unknown;
  /** The request as a curl line, for any failure found in this answer later. */
  curl: string;
}

/**
 * Sends one request of an operation and checks its answer against the
 * contract; what it finds is recorded in the run's findings. The statuses
 * the request should get, when given, are checked too.
 */
export class Exchanger {
  constructor(
    private readonly baseUrl: URL,
    private readonly client: PoliteClient,
    private readonly findings: Findings,
    private readonly key: string,
    private readonly now: () => number,
  ) {}

  /** The absolute URL of a request: the base URL, the operation's path filled in, the query. */
  urlOf(operation: Operation, request: TestRequest): string {
    const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
      encodeURIComponent(request.pathParams[name] ?? ''),
    );
    const query = new URLSearchParams(request.query).toString();
    return `${this.baseUrl.href.replace(/\/$/, '')}${path}${query ? `?${query}` : ''}`;
  }

  /** A URL the server gave (a Link target), resolved against the base URL's origin. */
  resolve(target: string): string {
    return new URL(target, this.baseUrl).href;
  }

  /**
   * Past an operation's sunset the contract answers 410 to whatever passed
   * admission: what a request expects changes with the date of the run.
   */
  private expectedNow(operation: Operation, expect: number[]): number[] {
    const sunset = operation.deprecation?.sunset;
    if (sunset === undefined || this.now() < sunset.getTime()) return expect;
    return expect.includes(401) ? [401] : [410];
  }

  /** Sends the request; undefined when the budget is spent. */
  async send(
    operation: Operation,
    request: TestRequest,
    options: { url?: string; expect?: number[] } = {},
  ): Promise<Answer | undefined> {
    const outgoing: OutgoingRequest = {
      method: operation.method,
      url: options.url ?? this.urlOf(operation, request),
      headers: request.headers,
      ...(request.body === undefined
        ? {}
        : { body: typeof request.body === 'string' ? request.body : Buffer.from(request.body.bytes) }),
    };
    const received = await this.client.send(outgoing);
    if (received === undefined) return undefined;
    const json = parseJson(received);
    const answer: Answer = { ...received, curl: curlLine(outgoing, this.key), ...(json === undefined ? {} : { json }) };
    const problems = responseProblems(operation, received, json);
    const expect = options.expect && this.expectedNow(operation, options.expect);
    // A 429 still there after its Retry-After is the quota speaking, not the request: checked, never "unexpected".
    if (expect !== undefined && !expect.includes(received.status) && received.status !== 429)
      problems.push({
        check: 'unexpected status',
        message: `${request.intent}: expected ${expect.join(' or ')}, got ${received.status} ${received.text.slice(0, 200)}`,
      });
    this.record(operation, answer, problems);
    return answer;
  }

  /** A problem found by a step across answers (paging, ETag, replay), charged to the answer that shows it. */
  fail(operation: Operation, answer: Answer, check: string, message: string): void {
    this.findings.fail({ subject: operation.operationId, status: answer.status, check, message, curl: answer.curl });
  }

  private record(operation: Operation, answer: Answer, problems: Problem[]): void {
    const row = this.findings.row(operation.operationId, answer.status);
    row.responses += 1;
    for (const name of undeclaredHeaders(operation, answer)) row.undeclaredHeaders.add(name);
    // One failure per kind of problem in an answer; the messages joined.
    const byCheck = new Map<string, string[]>();
    for (const problem of problems)
      byCheck.set(problem.check, [...(byCheck.get(problem.check) ?? []), problem.message]);
    if (byCheck.size > 0) row.failed += 1;
    for (const [check, messages] of byCheck) this.fail(operation, answer, check, messages.join('; '));
  }
}

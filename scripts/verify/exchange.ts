import { wireBody, type TestRequest } from '../../lib/conformance/checks.js';
import { namesForeignResource } from '../../lib/conformance/requests.js';
import type { Operation } from '../../lib/conformance/spec.js';
import { parseJson, responseProblems, undeclaredHeaders, type Problem } from './checks.js';
import { curlLine } from './curl.js';
import type { Findings } from './findings.js';
import type { OutgoingRequest, PoliteClient, ReceivedResponse } from './http.js';
import type { Answer } from './answer.js';
import type { OwnResources } from './ownResources.js';

export type { Answer } from './answer.js';

/**
 * Sends one request of an operation and checks its answer against the
 * contract; what it finds is recorded in the run's findings. The statuses
 * the request should get, when given, are checked too.
 */
/** RFC 6750 3.1: the scopes a 403 insufficient_scope names in its challenge. */
const scopeChallenge = /^Bearer realm="[^"]*", error="insufficient_scope", scope="([^"]+)"$/;

function isInsufficientScope(received: ReceivedResponse, json: unknown): boolean {
  return received.status === 403 && (json as { code?: unknown } | undefined)?.code === 'insufficient_scope';
}

export class Exchanger {
  /** Operations the key was refused for want of a scope (noted once each). */
  private readonly scopeRefused = new Set<string>();

  constructor(
    private readonly baseUrl: URL,
    private readonly client: PoliteClient,
    private readonly findings: Findings,
    private readonly key: string,
    private readonly now: () => number,
    /** The resources the run made: the only ones an unsafe request may name. */
    private readonly own?: OwnResources,
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

  /**
   * Sends the request; undefined when the budget is spent, or when the
   * request has an unsafe method and names a resource the run did not make
   * (never sent: a failure of the run itself).
   */
  async send(
    operation: Operation,
    request: TestRequest,
    options: { url?: string; expect?: number[] } = {},
  ): Promise<Answer | undefined> {
    if (
      this.own &&
      namesForeignResource(operation, request, (parameter, value) =>
        this.own!.isOwn(parameter, value, operation.path, request.pathParams),
      )
    ) {
      this.findings.fail({
        subject: operation.operationId,
        check: 'unsafe request to a resource the run did not make',
        message: `${request.intent}: not sent, ${operation.method} ${this.urlOf(operation, request)} names a resource this run did not create`,
      });
      return undefined;
    }
    const outgoing: OutgoingRequest = {
      method: operation.method,
      url: options.url ?? this.urlOf(operation, request),
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: wireBody(request.body) }),
    };
    const received = await this.client.send(outgoing);
    if (received === undefined) return undefined;
    const json = parseJson(received);
    const answer: Answer = { ...received, curl: curlLine(outgoing, this.key), ...(json === undefined ? {} : { json }) };
    const problems = responseProblems(operation, received, json);
    let expect = options.expect && this.expectedNow(operation, options.expect);
    if (isInsufficientScope(received, json)) {
      problems.push(...this.scopeProblems(operation, received));
      // A key restricted to other scopes (a read-only key in write mode): what the operator gave, not a failure.
      if (expect && !expect.includes(401)) expect = [...expect, 403];
    }
    // A 429 still there after its Retry-After is the quota speaking, not the request: checked, never "unexpected".
    if (expect !== undefined && !expect.includes(received.status) && received.status !== 429)
      problems.push({
        check: 'unexpected status',
        message: `${request.intent}: expected ${expect.join(' or ')}, got ${received.status} ${received.text.slice(0, 200)}`,
      });
    this.record(operation, answer, problems);
    const maker = this.own?.makerOf(operation);
    if (maker && answer.status === maker.status) this.own!.add(maker, answer, request.pathParams);
    return answer;
  }

  /** True once the operation was refused with 403 insufficient_scope: the key lacks its scope. */
  refusedForScope(operationId: string): boolean {
    return this.scopeRefused.has(operationId);
  }

  /** The challenge must name the scope the contract says the operation requires; the run notes the key's gap once. */
  private scopeProblems(operation: Operation, received: ReceivedResponse): Problem[] {
    const named = scopeChallenge.exec(received.headers.get('www-authenticate') ?? '')?.[1];
    const required = operation.scopes.join(' ');
    if (!this.scopeRefused.has(operation.operationId)) {
      this.scopeRefused.add(operation.operationId);
      this.findings.notes.push(
        `the API key lacks the scope ${required || '(none declared)'} of ${operation.operationId} (403 insufficient_scope): ` +
          'its other answers were not checked; give a key with that scope to check them',
      );
    }
    if (named === required) return [];
    return [
      {
        check: 'scope challenge',
        message: `403 insufficient_scope must name scope="${required}" (RFC 6750 3.1); WWW-Authenticate was ${received.headers.get('www-authenticate') ?? 'absent'}`,
      },
    ];
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

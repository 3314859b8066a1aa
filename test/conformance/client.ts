import type { Operation } from '../../lib/contract/spec.js';
import { conformanceProblems, type TestRequest, type TestResponse } from '../../lib/contract/checks.js';

export type { TestRequest, TestResponse } from '../../lib/contract/checks.js';

/**
 * Sends generated requests over real HTTP and checks every answer against
 * the contract: a declared status, a body and headers that validate against
 * the declared schemas, and an Error object whose status is the HTTP status.
 */
export class ContractClient {
  /** Requests sent, for the report. */
  sent = 0;
  /** "operationId status" pairs seen, for the coverage test. */
  readonly observed = new Set<string>();
  private readonly byId: Map<string, Operation>;

  constructor(
    private readonly origin: string,
    private readonly basePath: string,
    operations: Operation[],
  ) {
    this.byId = new Map(operations.map((operation) => [operation.operationId, operation]));
  }

  operation(operationId: string): Operation {
    const operation = this.byId.get(operationId);
    if (!operation) throw new Error(`no operation ${operationId} in openapi.yaml`);
    return operation;
  }

  url(request: TestRequest): string {
    const operation = this.operation(request.operationId);
    const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
      encodeURIComponent(request.pathParams[name] ?? ''),
    );
    const query = new URLSearchParams(request.query).toString();
    return `${this.basePath}${path}${query ? `?${query}` : ''}`;
  }

  /** Sends the request and returns the response with the contract problems found in it. */
  async send(request: TestRequest): Promise<TestResponse & { problems: string[] }> {
    return this.sendTo(this.url(request), request);
  }

  /** Sends to a URL the server gave (a Link target) as the given operation. */
  async sendTo(url: string, request: TestRequest): Promise<TestResponse & { problems: string[] }> {
    const operation = this.operation(request.operationId);
    const body =
      request.body === undefined
        ? undefined
        : typeof request.body === 'string'
          ? request.body
          : Buffer.from(request.body.bytes);
    this.sent += 1;
    const response = await fetch(this.origin + url, {
      method: operation.method,
      headers: request.headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.text();
    const received: TestResponse = { status: response.status, headers: response.headers, text };
    const problems: string[] = [];
    if ((response.headers.get('content-type') ?? '').startsWith('application/json') && text !== '') {
      try {
        received.json = JSON.parse(text);
      } catch {
        problems.push('the body says it is JSON but does not parse');
      }
    }
    this.observed.add(`${operation.operationId} ${response.status}`);
    problems.push(...conformanceProblems(operation, received));
    return { ...received, problems };
  }
}

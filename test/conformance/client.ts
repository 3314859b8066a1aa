import type { Operation } from './spec.js';

/** A request as the generators build it: printable, so a counterexample reads as a request. */
export interface TestRequest {
  operationId: string;
  /** Why this request was made, e.g. "valid" or "body name.maxLength". */
  intent: string;
  pathParams: Record<string, string>;
  /** Repeated names are sent repeatedly. */
  query: Array<[string, string]>;
  headers: Record<string, string>;
  /** Raw body text; bytes when no Content-Type may be set by fetch. */
  body?: string | { bytes: string };
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, when there is one. */
  json?: unknown;
}

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

/** What in a response breaks the contract of its operation; empty when nothing does. */
export function conformanceProblems(operation: Operation, response: TestResponse): string[] {
  const problems: string[] = [];
  if (response.status >= 500 && response.status !== 503)
    problems.push(`server error ${response.status}: ${response.text}`);
  const declared = operation.responses.get(String(response.status));
  if (!declared) {
    problems.push(
      `status ${response.status} is not declared for ${operation.operationId} (declared: ${[...operation.responses.keys()].join(', ')})`,
    );
    return problems;
  }
  if (declared.validateBody) {
    if (response.json === undefined) {
      problems.push(
        `status ${response.status} declares a JSON body, got ${JSON.stringify(response.text.slice(0, 200))} (${response.headers.get('content-type')})`,
      );
    } else if (!declared.validateBody(response.json)) {
      problems.push(
        `body does not match the schema of ${response.status}: ${JSON.stringify(declared.validateBody.errors)} in ${response.text.slice(0, 500)}`,
      );
    }
  }
  for (const header of declared.headers) {
    const value = response.headers.get(header.name);
    if (value === null) {
      if (header.required) problems.push(`required header ${header.name} missing`);
      continue;
    }
    const typed = header.schema['type'] === 'integer' && /^-?[0-9]+$/.test(value) ? Number(value) : value;
    if (!header.validate(typed))
      problems.push(
        `header ${header.name}: ${JSON.stringify(value)} does not match its schema: ${JSON.stringify(header.validate.errors)}`,
      );
  }
  if (response.status >= 400 && response.json !== undefined) {
    const status = (response.json as { status?: unknown }).status;
    if (status !== response.status)
      problems.push(`Error.status ${String(status)} differs from the HTTP status ${response.status}`);
  }
  return problems;
}

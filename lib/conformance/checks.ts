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

import { Agent, request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import type { Operation } from '../../lib/conformance/spec.js';
import { conformanceProblems, wireBody, type TestRequest, type TestResponse } from '../../lib/conformance/checks.js';

export type { TestRequest, TestResponse } from '../../lib/conformance/checks.js';

interface Exchange {
  method: string;
  headers: Record<string, string>;
  /** Text, or bytes sent as they are. */
  body: string | Uint8Array | undefined;
}

/**
 * The headers fetch() adds, so the server sees what a browser or fetch
 * client sends; a string body without a Content-Type is sent as fetch sends it.
 */
function clientHeaders({ headers, body }: Exchange): OutgoingHttpHeaders {
  const names = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
  const added: Record<string, string> = { accept: '*/*', 'user-agent': 'node' };
  if (typeof body === 'string' && !names.has('content-type')) added['content-type'] = 'text/plain;charset=UTF-8';
  // fetch frames every body it sends; node:http sends a DELETE's (or an OPTIONS') with neither Content-Length
  // nor chunked encoding, and the server then reads it as the start of the next request.
  if (body !== undefined && !names.has('content-length') && !names.has('transfer-encoding'))
    added['content-length'] = String(Buffer.byteLength(body));
  const missing = Object.entries(added).filter(([name]) => !names.has(name));
  return { ...Object.fromEntries(missing), ...headers };
}

/**
 * One request on a kept-alive connection. node:http, not fetch(): the suite
 * sends thousands of requests, and fetch's streams cost about twice the CPU
 * of the server's answer (measured in a profile of this file).
 */
function exchange(
  agent: Agent,
  url: URL,
  request: Exchange,
): Promise<{ status: number; headers: Headers; text: string; bytes: Uint8Array }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      url,
      { agent, method: request.method, headers: clientHeaders(request) },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const headers = new Headers();
          const raw = response.rawHeaders;
          for (let index = 0; index < raw.length; index += 2) headers.append(raw[index]!, raw[index + 1]!);
          const bytes = Buffer.concat(chunks);
          resolve({ status: response.statusCode ?? 0, headers, text: bytes.toString('utf8'), bytes });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}

/**
 * One request on its own connection exactly as given: any method, only the
 * headers named (no Content-Type added for a body).
 */
export async function rawExchange(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Headers; text: string }> {
  const agent = new Agent({ keepAlive: false });
  try {
    return await new Promise((resolve, reject) => {
      const outgoing = httpRequest(new URL(url), { agent, method, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const received = new Headers();
          const raw = response.rawHeaders;
          for (let index = 0; index < raw.length; index += 2) received.append(raw[index]!, raw[index + 1]!);
          resolve({
            status: response.statusCode ?? 0,
            headers: received,
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  } finally {
    agent.destroy();
  }
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
  private readonly agent = new Agent({ keepAlive: true });

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
    const body = request.body === undefined ? undefined : wireBody(request.body);
    this.sent += 1;
    const response = await exchange(this.agent, new URL(this.origin + url), {
      method: operation.method,
      headers: request.headers,
      body,
    });
    const { text, bytes } = response;
    const received: TestResponse = { status: response.status, headers: response.headers, text, bytes };
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

  /** Closes the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }
}

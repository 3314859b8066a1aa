import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { buildApp, type AppConfig } from '../../src/app.js';
import { generateApiKey, toStoredKey } from '../../src/auth/keys.js';
import { insertApiKey } from '../../src/db/apiKeys.js';
import type { Database } from '../../src/db/index.js';
import type { QueryResult, Statement } from '../../src/db/types.js';
import type { HttpLimitOverrides } from '../../src/http/limits.js';
import type { ServiceMetrics } from '../../src/observability/metrics.js';
import { testConfig, testLimits } from '../helpers/app.js';
import { openBackend, type Backend } from '../helpers/databases.js';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the server sent, as text. */
  raw: string;
}

export interface HostileApp {
  app: FastifyInstance;
  port: number;
  key: string;
  /** Every log line written so far, parsed. */
  logLines(): Record<string, unknown>[];
  /** Everything written to the log so far, as text. */
  logText(): string;
  /** Sends these bytes on a new connection and reads until the server closes it. */
  send(bytes: string | Buffer | (string | Buffer)[]): Promise<RawResponse>;
}

/** Reads one HTTP/1.1 response (Content-Length framed) out of what a server sent. */
export function parseResponse(raw: Buffer): RawResponse {
  const text = raw.toString('latin1');
  const headerEnd = text.indexOf('\r\n\r\n');
  if (headerEnd < 0) throw new Error(`no complete response in ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine = '', ...headerLines] = text.slice(0, headerEnd).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? raw.length - headerEnd - 4);
  const body = raw.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8');
  return { status: Number(statusLine.split(' ')[1]), headers, body, raw: text };
}

/** Writes the parts one after the other and collects everything until the server closes the connection. */
export function exchange(port: number, parts: (string | Buffer)[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // A server that answers and then resets still answered.
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') resolve(Buffer.concat(chunks));
      else reject(error);
    });
    socket.on('close', () => {
      resolve(Buffer.concat(chunks));
    });
    socket.on('connect', () => {
      for (const part of parts) socket.write(part);
    });
  });
}

/**
 * The app on a fresh database of the given kind, listening on a free
 * loopback port, with its log captured; closed when the test ends.
 * options.limits replaces fixed limits (src/http/limits.ts).
 */
export async function startHostileApp(
  t: Test,
  options: Partial<AppConfig> & { limits?: HttpLimitOverrides; metrics?: ServiceMetrics } = {},
  backend: Backend = 'embedded',
  wrapDatabase: (db: Database) => Database = (db) => db,
): Promise<HostileApp> {
  const { limits, metrics, ...config } = options;
  const opened = await openBackend(backend);
  const key = generateApiKey();
  await insertApiKey(opened.db, toStoredKey('hostile', key));
  const output: string[] = [];
  const app = await buildApp(
    { ...testConfig, LOG_LEVEL: 'info', ...config },
    {
      db: wrapDatabase(opened.db),
      logStream: { write: (line) => void output.push(line) },
      limits: { ...testLimits, ...limits },
      ...(metrics === undefined ? {} : { metrics }),
    },
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(async () => {
    await app.close();
    await opened.close();
  });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening on TCP');
  const logText = () => output.join('');
  return {
    app,
    port: address.port,
    key,
    logText,
    logLines: () =>
      logText()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    send: async (bytes) => parseResponse(await exchange(address.port, Array.isArray(bytes) ? bytes : [bytes])),
  };
}

/** A whole request as text: request line, headers (Connection: close added), blank line, body. */
export function rawRequest(
  requestLine: string,
  headers: Record<string, string> | [string, string][] = {},
  body = '',
): string {
  const pairs = Array.isArray(headers) ? headers : Object.entries(headers);
  const lines = [requestLine, 'Host: 127.0.0.1', ...pairs.map(([name, value]) => `${name}: ${value}`)];
  if (body !== '' && !pairs.some(([name]) => name.toLowerCase() === 'content-length')) {
    lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  }
  lines.push('Connection: close');
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

type LogLine = Record<string, unknown>;

/**
 * The log lines that match, once there are at least `count` of them; what
 * matched so far if the ceiling passes first (the caller's assertion says
 * what was missing). Lines are written in batches and a parser-error line
 * may trail its answer, so a test waits for the line itself.
 */
export async function untilLogged(h: HostileApp, matches: (line: LogLine) => boolean, count = 1): Promise<LogLine[]> {
  const started = Date.now();
  let lines = h.logLines().filter(matches);
  while (lines.length < count && Date.now() - started < 30_000) {
    await sleep(20);
    lines = h.logLines().filter(matches);
  }
  return lines;
}

async function logLineFor(h: HostileApp, requestId: string): Promise<LogLine | undefined> {
  const [line] = await untilLogged(
    h,
    (entry) => entry['requestId'] === requestId && typeof entry['status'] === 'number',
  );
  return line;
}

/**
 * The checks every hostile request gets: the Error object and nothing else,
 * its status equal to the HTTP status, a bounded message, X-Request-Id and
 * nosniff on the response, and one log line under that request id.
 */
export async function assertErrorAnswer(
  t: Test,
  h: HostileApp,
  response: RawResponse,
  status: number,
  code: string,
): Promise<Record<string, unknown>> {
  t.equal(response.status, status, `HTTP ${status}`);
  t.match(response.headers['content-type'], /^application\/json/, 'a JSON body');
  const body = JSON.parse(response.body) as Record<string, unknown>;
  t.same(Object.keys(body).sort(), ['code', 'message', 'status'], 'the Error object, nothing else');
  t.equal(body['code'], code);
  t.equal(body['status'], status, 'status equals the HTTP status');
  t.type(body['message'], 'string');
  t.ok(String(body['message']).length <= 1000, 'message within the contract (1,000 characters)');
  t.ok(Buffer.byteLength(response.body) < 1200, `a small body (${Buffer.byteLength(response.body)} bytes)`);
  const requestId = response.headers['x-request-id'];
  t.match(requestId, /^[A-Za-z0-9._:-]{1,128}$/, 'X-Request-Id');
  t.equal(response.headers['x-content-type-options'], 'nosniff');
  const line = await logLineFor(h, requestId ?? '');
  t.ok(line, 'a log line under the request id');
  t.equal(line?.['status'], status, 'the log line has the status');
  return body;
}

/** The database with its query() seen first by intercept (a counting or failing wrapper); the rest untouched. */
export function interceptQueries(
  intercept: (statement: Statement, run: () => Promise<QueryResult<unknown>>) => Promise<QueryResult<unknown>>,
): (db: Database) => Database {
  return (db) =>
    new Proxy(db, {
      get(target, property) {
        if (property === 'query') {
          return (statement: Statement, values?: readonly unknown[]) =>
            intercept(statement, () => target.query(statement, values));
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
}

import { METHODS } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { startAppWithoutDatabase } from '../helpers/app.js';
import { allowList } from '../helpers/methods.js';
import { rawExchange } from './client.js';
import { basePath, loadContract } from '../../lib/conformance/spec.js';

/**
 * Every method Node parses (http.METHODS), on every path of openapi.yaml:
 * a method the path does not declare is a 405 with Allow and the Error
 * object, whatever body and headers come with it (the answer is decided
 * before anything reads the body); the same methods on a path the spec does
 * not have are a 404. Declared methods are the other properties' business.
 */

const { document, operations } = loadContract();
const prefix = basePath(document);

const declared = new Map<string, string[]>();
for (const { path, method } of operations) declared.set(path, [...(declared.get(path) ?? []), method].sort());

/** What may come with a request: the bodies and headers that reach different parts of fastify. */
const variants: Array<{ name: string; headers: Record<string, string>; body?: string }> = [
  { name: 'no body', headers: {} },
  { name: 'JSON body', headers: { 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' },
  { name: 'body without Content-Type', headers: {}, body: 'x' },
  { name: 'malformed Content-Type', headers: { 'content-type': ';;' }, body: '{}' },
  { name: 'unsupported Content-Type', headers: { 'content-type': 'text/plain' }, body: 'hello' },
  { name: 'malformed JSON', headers: { 'content-type': 'application/json' }, body: '{' },
  { name: 'a key that is not valid', headers: { authorization: 'Bearer nope' } },
];

// CONNECT takes an authority, not a path (RFC 9110, 9.3.6): Node hands it
// to the app as its own event, which test/hostile covers.
const methods = METHODS.filter((method) => method !== 'CONNECT');

t.test('every undeclared method on every path is a 405 with Allow, whatever it carries', async (t) => {
  const app = await startAppWithoutDatabase(t);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const mismatches: string[] = [];
  let cases = 0;
  const paths: Array<[string, string[]]> = [...declared, ['/no-such-path/{x}', []]];
  for (const [path, allowed] of paths) {
    const url = prefix + path.replace(/\{[^}]+\}/g, '1');
    for (const method of methods.filter((candidate) => !allowed.includes(candidate))) {
      for (const variant of variants) {
        cases += 1;
        const response = await rawExchange(origin + url, method, variant.headers, variant.body);
        const expected = allowed.length > 0 ? 405 : 404;
        const label = `${method} ${url} (${variant.name})`;
        const body = method === 'HEAD' ? undefined : (JSON.parse(response.text || 'null') as unknown);
        const code = expected === 405 ? 'method_not_allowed' : 'not_found';
        const problems = [
          response.status !== expected && `status ${response.status}, expected ${expected}: ${response.text}`,
          expected === 405 &&
            JSON.stringify(allowList(response.headers.get('allow'))) !== JSON.stringify(allowed) &&
            `Allow ${response.headers.get('allow')}, expected ${allowed.join(', ')}`,
          body !== undefined &&
            JSON.stringify(body) !==
              JSON.stringify({ code, message: (body as { message?: string }).message, status: expected }) &&
            `not the Error object of a ${expected}: ${response.text}`,
        ].filter(Boolean);
        if (problems.length > 0) mismatches.push(`${label}: ${problems.join('; ')}`);
      }
    }
  }
  t.same(mismatches, [], `${cases} requests, each answered 405 (or 404 off the spec's paths) with the Error object`);
  t.comment(`${cases} method cases over ${paths.length} paths and ${methods.length} methods`);
});

import { basePath, loadContract } from '../../lib/conformance/spec.js';

// Read when first asked, never at import: a spec a tool refuses fails the test that asks, by its construct.
let contract: ReturnType<typeof loadContract> | undefined;
const localContract = () => (contract ??= loadContract());

/** Methods fastify routes to the 405 handler; OPTIONS has a meaning of its own (CORS preflights). */
const candidates = ['DELETE', 'PUT', 'PATCH', 'POST', 'GET', 'HEAD'] as const;

export interface UndeclaredMethod {
  method: (typeof candidates)[number];
  /** The methods openapi.yaml declares on the path: what a 405's Allow lists, sorted. */
  allowed: string[];
  /** The path with the base path, for a request URL (fill in its parameters). */
  url: string;
}

/**
 * A method that openapi.yaml does not declare on a path (/pets/{petId}), so
 * that a test of the 405 keeps working when an operation is added to it.
 */
export function undeclaredMethodOn(path: string): UndeclaredMethod {
  const { document, operations } = localContract();
  const allowed = operations
    .filter((operation) => operation.path === path)
    .map((operation) => operation.method)
    .sort();
  if (allowed.length === 0) throw new Error(`openapi.yaml has no path ${path}`);
  const method = candidates.find((candidate) => !allowed.includes(candidate));
  if (!method) throw new Error(`openapi.yaml declares every method on ${path}; a 405 cannot be tested there`);
  return { method, allowed, url: basePath(document) + path };
}

/** An Allow header as a sorted list, so tests do not depend on its order. */
export const allowList = (header: unknown): string[] => String(header).split(/,\s*/).sort();

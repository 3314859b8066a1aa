/**
 * tsx scripts/contract/specmaticSpec.ts <dir>
 *
 * Writes the spec Specmatic runs (npm run contract -- testers): openapi.yaml
 * without the operations it must not send to a deployment, into
 * <dir>/openapi.yaml, and the external examples of the others into
 * <dir>/openapi_examples/ (Specmatic finds them beside the spec by name).
 * Prints each operation left out with the reason.
 *
 * Specmatic sends each named example as it stands and cannot carry a value
 * from one answer into the next request: an unsafe method (RFC 9110 9.2.1)
 * on a path that names a resource would name the example's shared resource
 * (`found`, id 1, which the docs promise a deployment holds), and change or
 * remove it. Such operations are left to the tools that chain (the Arazzo
 * workflows, npm run verify), which name only what they made.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseDocument } from 'yaml';
import { isSafe, kindAt, resourceKinds } from '../../lib/conformance/resources.js';
import { loadContract, type Operation } from '../../lib/conformance/spec.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { isMainModule } from '../../src/entryPoint.js';
import { specPath } from '../../src/openapi/files.js';

/**
 * The operations a tool that cannot chain must not send, each with the reason read from the spec: an
 * unsafe method whose path names a resource (its parameter, and the operation that makes one).
 */
export function unchainableOperations(operations: Operation[]): Array<{ operation: Operation; reason: string }> {
  const kinds = resourceKinds(operations);
  return operations
    .filter((operation) => !isSafe(operation) && operation.parameters.some((parameter) => parameter.in === 'path'))
    .map((operation) => {
      const named = operation.parameters
        .filter((parameter) => parameter.in === 'path')
        .map((parameter) => {
          const makers = kindAt(kinds, operation.path, parameter.name)?.makers.map(
            (maker) => maker.operation.operationId,
          );
          return makers?.length ? `${parameter.name} (made by ${makers.join(', ')})` : parameter.name;
        });
      return {
        operation,
        reason:
          `${operation.method} ${operation.path} is unsafe and names a resource by ${named.join(', ')}: ` +
          "Specmatic's static examples would name a shared one (id 1), not one it made",
      };
    });
}

const examplesDir = join(repoRoot, 'openapi_examples');

/** The operation an external example's request is for, by method and path template. */
function exampleOperation(file: string, operations: Operation[]): Operation | undefined {
  const example = JSON.parse(readFileSync(join(examplesDir, file), 'utf8')) as {
    'http-request': { method: string; path: string };
  };
  const { method, path } = example['http-request'];
  return operations.find(
    (operation) =>
      operation.method === method.toUpperCase() &&
      new RegExp(`^${operation.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path.split('?')[0]!),
  );
}

/** Writes the spec and examples Specmatic runs into `dir`; returns a line per operation left out. */
export function writeSpecmaticSpec(dir: string, source = readFileSync(specPath, 'utf8')): string[] {
  const document = parseDocument(source);
  const spec = parse(source) as JsonObject;
  const { operations } = loadContract(spec);
  const leftOut = unchainableOperations(operations);
  const removed = new Set(leftOut.map(({ operation }) => operation.operationId));
  for (const { operation } of leftOut) document.deleteIn(['paths', operation.path, operation.method.toLowerCase()]);
  // Links to what was left out lead nowhere now.
  for (const [path, item] of Object.entries(spec['paths'] as Record<string, Record<string, any>>))
    for (const [method, operation] of Object.entries(item))
      for (const [status, response] of Object.entries((operation?.responses ?? {}) as Record<string, any>))
        for (const [name, link] of Object.entries((response?.links ?? {}) as Record<string, any>))
          // An operation left out takes its own links with it (one may link to itself).
          if (removed.has(link.operationId as string) && !removed.has(String(operation?.operationId)))
            document.deleteIn(['paths', path, method, 'responses', status, 'links', name]);
  mkdirSync(join(dir, 'openapi_examples'), { recursive: true });
  writeFileSync(join(dir, 'openapi.yaml'), document.toString());
  for (const file of readdirSync(examplesDir).filter((name) => name.endsWith('.json'))) {
    const operation = exampleOperation(file, operations);
    if (operation && !removed.has(operation.operationId))
      copyFileSync(join(examplesDir, file), join(dir, 'openapi_examples', file));
  }
  return leftOut.map(({ operation, reason }) => `left out of Specmatic: ${operation.operationId} (${reason})`);
}

if (isMainModule(import.meta.url)) {
  const dir = process.argv[2];
  if (dir === undefined) {
    process.stderr.write('usage: tsx scripts/contract/specmaticSpec.ts <dir>\n');
    process.exitCode = 2;
  } else for (const line of writeSpecmaticSpec(dir)) process.stdout.write(`${line}\n`);
}

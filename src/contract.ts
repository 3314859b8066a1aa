import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { specPath } from './paths.js';

/** The base path every operation of the contract is served under. */
export const apiPrefix = '/v1';

export interface SecurityRequirement {
  [scheme: string]: string[];
}

export interface OperationObject {
  operationId: string;
  deprecated?: boolean;
  security?: SecurityRequirement[];
  requestBody?: { required?: boolean };
  responses?: Record<string, { $ref?: string; headers?: Record<string, unknown> }>;
  [extension: `x-${string}`]: unknown;
}

export interface OpenApiDocument {
  openapi: string;
  info: { version: string; title: string };
  security?: SecurityRequirement[];
  paths: Record<string, Record<string, OperationObject>>;
  components: { securitySchemes: Record<string, { type: string; scheme?: string }> };
}

export const httpMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Reads openapi.yaml, the single source of truth, once. */
export function loadSpecification(): OpenApiDocument {
  return parse(readFileSync(specPath, 'utf8')) as OpenApiDocument;
}

export interface OperationEntry {
  method: string;
  path: string;
  operation: OperationObject;
}

export function listOperations(spec: OpenApiDocument): OperationEntry[] {
  const entries: OperationEntry[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of httpMethods) {
      const operation = item[method];
      if (operation) entries.push({ method: method.toUpperCase(), path, operation });
    }
  }
  return entries;
}

/** The security requirements that apply to an operation (its own, else the document's). */
export function securityOf(spec: OpenApiDocument, operation: OperationObject): SecurityRequirement[] {
  return operation.security ?? spec.security ?? [];
}

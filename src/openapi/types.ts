// The parts of an OpenAPI document this service reads, and what it derives
// from them. Types only.

export interface SecurityRequirement {
  [scheme: string]: string[];
}

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Record<string, unknown>;
  [extension: `x-${string}`]: unknown;
}

/** A response, or a reference to one under components/responses. */
export interface ResponseObject {
  $ref?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, unknown>;
}

export interface OperationObject {
  operationId: string;
  summary?: string;
  parameters?: (ParameterObject | { $ref: string })[];
  deprecated?: boolean;
  security?: SecurityRequirement[];
  requestBody?: { required?: boolean; content?: Record<string, unknown>; 'x-body-limit-bytes'?: unknown };
  responses?: Record<string, ResponseObject>;
  [extension: `x-${string}`]: unknown;
}

export interface ServerObject {
  url: string;
  description?: string;
  'x-internal'?: boolean;
}

export interface OpenApiDocument {
  openapi: string;
  info: { version: string; title: string };
  servers: ServerObject[];
  security?: SecurityRequirement[];
  paths: Record<string, Record<string, OperationObject>>;
  components: {
    securitySchemes: Record<string, { type: string; scheme?: string }>;
    parameters?: Record<string, ParameterObject>;
    responses?: Record<string, ResponseObject>;
  };
}

/** One API route as fastify-openapi-glue derives it from the spec: schemas dereferenced, url with the base path. */
export interface RouteEntry {
  method: string;
  url: string;
  operationId: string;
  schema: Record<string, unknown>;
}

export interface OperationEntry {
  method: string;
  path: string;
  operation: OperationObject;
}

import type { FastifyRequest } from 'fastify';
import type { Database } from '../db/index.js';
import type { operations } from '../generated/api.js';

export type OperationId = keyof operations;
type Operation<K extends OperationId> = operations[K];

type OrEmpty<T> = [NonNullable<T>] extends [never] ? Record<string, never> : NonNullable<T>;
type JsonBody<T> = T extends { content: { 'application/json': infer Body } } ? Body : undefined;

export interface HandlerInput<K extends OperationId> {
  params: OrEmpty<Operation<K>['parameters']['path']>;
  query: OrEmpty<Operation<K>['parameters']['query']>;
  body: JsonBody<NonNullable<Operation<K>['requestBody']>>;
  request: FastifyRequest;
}

type Responses<K extends OperationId> = Operation<K>['responses'];

/** One of the responses the contract declares for the operation, with its status and typed body. */
export type HandlerResult<K extends OperationId> = {
  [Status in keyof Responses<K>]: {
    status: Status;
    body: JsonBody<Responses<K>[Status]>;
    headers?: Record<string, string>;
  };
}[keyof Responses<K>];

export type Handler<K extends OperationId> = (input: HandlerInput<K>) => Promise<HandlerResult<K>>;

/** What handlers may use; passed in, never imported, so tests and the server wire the same code. */
export interface HandlerDeps {
  db: Database;
}

export type HandlerMap = { [K in OperationId]: Handler<K> };

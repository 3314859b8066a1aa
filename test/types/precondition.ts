// Compile-time checks, run by `npm run typecheck`: an operation that declares 412 hands its handler a
// precondition typed by the representation it answers; one that does not, none. Each @ts-expect-error
// fails the check if the line below it compiles.
import type { PreconditionPart } from '../../src/handlers/types.js';

interface Thing {
  id: string;
  name: string;
}
interface Put {
  responses: {
    200: { headers: { ETag?: string }; content: { 'application/json': Thing } };
    201: { headers: { ETag?: string }; content: { 'application/json': Thing } };
    412: { content: { 'application/json': { code: 'precondition_failed'; message: string; status: 412 } } };
  };
}
interface Get {
  responses: { 200: { content: { 'application/json': Thing } }; 304: { content?: never } };
}

export const checks = (input: PreconditionPart<Put>): boolean =>
  input.precondition.isMetBy({ id: 'a', name: 'A' }) && input.precondition.isMetBy(undefined);
// @ts-expect-error the representation is a Thing
export const wrongShape = (input: PreconditionPart<Put>): boolean => input.precondition.isMetBy({ id: 1 });
// @ts-expect-error an operation without a 412 has no precondition
export const none = (input: PreconditionPart<Get>): unknown => input.precondition.isMetBy(undefined);

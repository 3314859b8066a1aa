import { validateHeaderValue } from 'node:http';

/**
 * Refuses a handler's header whose value Node would refuse when writing the
 * answer (a CR or LF from client input in a Location, say): thrown here, in
 * the handler's call, it is a bug the error handler answers as the Error
 * object (500 internal, logged with the request id), where Node's refusal at
 * write time would leave fastify's own 500 body. The message names the header,
 * never the value, which may carry the client's text.
 */
export function assertHeaderValuesWritable(headers: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(headers)) {
    try {
      validateHeaderValue(name, value as string);
    } catch {
      throw new Error(`The handler set header ${name} to a value HTTP cannot carry (a control character)`);
    }
  }
}

// The one home of the media types the client speaks: how a body of each is sent and read. The generator
// (generators/clientOperations.ts) asks the same table, so an operation whose media type has no entry fails
// `npm run generate` instead of getting a method that would send or read it wrongly.

/** How a body travels: JSON text, bytes as they are, or text as it is. */
export type Codec = 'json' | 'bytes' | 'text';

/** application/json and any structured +json type (RFC 6839): merge-patch+json, problem+json... */
const json = /^application\/(?:[\w.!#$&^-]+\+)?json$/;
/**
 * Types whose bodies are opaque bytes to the client: it hands them over as a Uint8Array. The same types as
 * the service's `bytes` entry (src/openapi/mediaTypes.ts), which this package cannot import: a test holds
 * the two together (test/constructs/client.test.ts).
 */
const bytes = /^(?:application\/(?:octet-stream|pdf)|(?:image|audio|video)\/(?:\*|[\w.+-]+))$/;

/** The codec of a media type (no parameters, any case), or undefined when the client cannot speak it. */
export function codecOf(mediaType: string): Codec | undefined {
  const type = mediaType.toLowerCase();
  if (json.test(type)) return 'json';
  if (bytes.test(type)) return 'bytes';
  if (type === 'text/plain') return 'text';
  return undefined;
}

/** A Content-Type's type and subtype, lower case, its parameters (charset...) dropped. */
export function essence(contentType: string | null): string | undefined {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  return type === '' ? undefined : type;
}

/** Whether a declared media type (possibly a range: image/*, *\/*) covers an answer's type. */
export function covers(declared: string, type: string): boolean {
  const [range = '', subtype = ''] = declared.toLowerCase().split('/');
  const [answerType = '', answerSubtype = ''] = type.split('/');
  return (range === '*' || range === answerType) && (subtype === '*' || subtype === answerSubtype);
}

/** A request body as fetch sends it under its codec: JSON serialized; bytes and text as given. */
export function encode(codec: Codec, body: unknown): RequestInit['body'] {
  if (codec === 'json') return JSON.stringify(body);
  return body as RequestInit['body'];
}

/** An answer's body read under its codec; throws a SyntaxError for JSON that does not parse. */
export function decode(codec: Codec, body: Uint8Array): unknown {
  if (codec === 'bytes') return body;
  const text = new TextDecoder().decode(body);
  return codec === 'json' ? (JSON.parse(text) as unknown) : text;
}

// The one home of each media type the service speaks: how a body of it is parsed, validated, serialized,
// tagged, sent by the client and sampled by the test generators. A media type no entry covers is refused
// by `npm run generate` (lib/constructs/catalogue.ts, docs/constructs.md).

export interface MediaTypeEntry {
  /** What the entry covers, for messages. */
  name: string;
  /** Whether a media type's essence (type/subtype, lower case, no parameters) is this entry's. */
  covers: (essence: string) => boolean;
  /**
   * How the HTTP layer reads a body of it:
   * - `strict-json`: the strict JSON parser (src/http/operations/jsonBody.ts), into the value its schema
   *   validates;
   * - `bytes`: the bytes as sent, a Buffer, never decoded; its schema (`type: string`, with at most
   *   `contentMediaType`) says nothing more, and the size is the operation's body limit.
   */
  parse: 'strict-json' | 'bytes';
  /**
   * How an answer of it is written:
   * - `json`: the route's compiled serializer for that media type, which validates it (serialization.ts);
   * - `bytes`: the handler's bytes as they are, with the declared type as Content-Type.
   */
  serialize: 'json' | 'bytes';
  /** The entity tag is taken over the bytes sent (src/http/operations/conditional.ts). */
  tag: 'serialized-bytes';
  /**
   * What the typed client sends and gives back:
   * - `json`: JSON.stringify of the value with this Content-Type, the answer parsed as JSON;
   * - `bytes`: a Uint8Array or Blob as it is, the answer as a Uint8Array.
   */
  client: 'json' | 'bytes';
  /**
   * What the test generators draw:
   * - `json-schema`: values from its schema, sent as JSON text;
   * - `bytes`: arbitrary bytes (none of them need be a valid image: the service stores what it is sent).
   */
  sample: 'json-schema' | 'bytes';
}

/** application/json and every JSON-based type (RFC 6839 `+json`: merge-patch+json, problem+json). */
export const json: MediaTypeEntry = {
  name: 'application/json and any application/*+json',
  covers: (essence) => /^application\/(?:[^\s;/]+\+)?json$/.test(essence),
  parse: 'strict-json',
  serialize: 'json',
  tag: 'serialized-bytes',
  client: 'json',
  sample: 'json-schema',
};

/** Opaque bytes: a photo, a document, a download. */
export const bytes: MediaTypeEntry = {
  name: 'application/octet-stream, application/pdf, image/*, audio/* and video/*',
  covers: (essence) =>
    essence === 'application/octet-stream' ||
    essence === 'application/pdf' ||
    /^(?:image|audio|video)\/[^\s;/*]+$/.test(essence),
  parse: 'bytes',
  serialize: 'bytes',
  tag: 'serialized-bytes',
  client: 'bytes',
  sample: 'bytes',
};

export const mediaTypes: readonly MediaTypeEntry[] = [json, bytes];

/** A media type or Content-Type's essence: type/subtype in lower case, parameters left out. */
export const essenceOf = (mediaType: string): string => (mediaType.split(';')[0] ?? '').trim().toLowerCase();

export const mediaTypeEntryOf = (mediaType: string): MediaTypeEntry | undefined =>
  mediaTypes.find((entry) => entry.covers(essenceOf(mediaType)));

export const isJsonMediaType = (mediaType: string | undefined): boolean =>
  mediaType !== undefined && json.covers(essenceOf(mediaType));

export const isBytesMediaType = (mediaType: string | undefined): boolean =>
  mediaType !== undefined && bytes.covers(essenceOf(mediaType));

/** The `+json` types, as fastify matches a whole Content-Type to a parser (application/json has its own). */
export const jsonSuffixPattern = /^application\/[^\s;/]+\+json\s*(?:;|$)/i;

// The one home of each media type the service speaks: how a body of it is parsed, validated, serialized,
// tagged, sent by the client and sampled by the test generators. A media type no entry covers is refused
// by `npm run generate` (lib/constructs/catalogue.ts, docs/constructs.md).

export interface MediaTypeEntry {
  /** What the entry covers, for messages. */
  name: string;
  /** Whether a media type's essence (type/subtype, lower case, no parameters) is this entry's. */
  covers: (essence: string) => boolean;
  /** Parsed by the strict JSON parser (src/http/operations/jsonBody.ts), into the value its schema validates. */
  parse: 'strict-json';
  /** Serialized by the route's compiled serializer for that media type, which validates it (serialization.ts). */
  serialize: 'json';
  /** The entity tag is taken over the serialized bytes (src/http/operations/conditional.ts). */
  tag: 'serialized-bytes';
  /** The client sends JSON.stringify of the value with this Content-Type and parses the answer as JSON. */
  client: 'json';
  /** The test generators draw values from its schema and send them as JSON text. */
  sample: 'json-schema';
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

export const mediaTypes: readonly MediaTypeEntry[] = [json];

/** A media type or Content-Type's essence: type/subtype in lower case, parameters left out. */
export const essenceOf = (mediaType: string): string => (mediaType.split(';')[0] ?? '').trim().toLowerCase();

export const mediaTypeEntryOf = (mediaType: string): MediaTypeEntry | undefined =>
  mediaTypes.find((entry) => entry.covers(essenceOf(mediaType)));

export const isJsonMediaType = (mediaType: string | undefined): boolean =>
  mediaType !== undefined && json.covers(essenceOf(mediaType));

/** The `+json` types, as fastify matches a whole Content-Type to a parser (application/json has its own). */
export const jsonSuffixPattern = /^application\/[^\s;/]+\+json\s*(?:;|$)/i;

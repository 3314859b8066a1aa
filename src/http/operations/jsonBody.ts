import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import { jsonSuffixPattern } from '../../openapi/mediaTypes.js';
import { excerpt } from '../errors/excerpt.js';
import { assertDepthWithin } from './jsonDepth.js';
import { assertLiteralsExact } from './jsonLiterals.js';
import { assertNoUnpairedSurrogates } from './surrogates.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const charsetParameter = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;

function unsupported(message: string): ApiError {
  return new ApiError(415, 'unsupported_media_type', message);
}

/**
 * A body with a Content-Encoding but identity is a 415, whatever its media type: the service does not
 * decompress, and a plain body labelled gzip is a lie.
 */
export function refuseContentEncoding(request: FastifyRequest): void {
  const encoding = request.headers['content-encoding']?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    throw unsupported(`Content-Encoding '${excerpt(encoding)}' is not supported; send the body uncompressed.`);
  }
}

/** The body as the client meant it, or the reason it cannot be read as sent. */
function decodeBody(request: FastifyRequest, body: Buffer): string {
  refuseContentEncoding(request);
  const charset = charsetParameter.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw unsupported(`charset '${excerpt(charset)}' is not supported; send JSON in UTF-8.`);
  }
  try {
    return utf8.decode(body);
  } catch {
    throw new ApiError(400, 'invalid_request', 'The request body is not valid UTF-8.');
  }
}

/**
 * Replaces fastify's application/json parser by a strict one: the bytes are
 * decoded as UTF-8 with errors refused (the default would store U+FFFD in
 * place of a bad byte, so the stored name would differ from what was sent),
 * any other charset and any Content-Encoding but identity are a 415 (the
 * service does not decompress, and a plain body labelled gzip is a lie).
 * A body nested past maxJsonDepth is a 400 before it is parsed.
 * Parsing itself stays fastify's, with its prototype-poisoning protection;
 * what parses is then checked for what JSON.parse changes without a word (a
 * number rounded into another integer, a property sent twice) and for
 * strings that are no Unicode text (an unpaired surrogate), a 400.
 */
export function registerStrictJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  // Every JSON media type (src/openapi/mediaTypes.ts) is parsed alike; the route refuses one it does not declare.
  const parser: Parameters<typeof app.addContentTypeParser<Buffer>>[2] = (request, body, done) => {
    let text: string;
    try {
      text = decodeBody(request, body);
      assertDepthWithin(text);
    } catch (error) {
      done(error as ApiError, undefined);
      return;
    }
    void parseJson(request, text, (error, parsed) => {
      if (error) {
        done(error, undefined);
        return;
      }
      try {
        assertLiteralsExact(text);
        assertNoUnpairedSurrogates(text, parsed);
      } catch (refusal) {
        done(refusal as ApiError, undefined);
        return;
      }
      done(null, parsed);
    });
  };
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parser);
  app.addContentTypeParser(jsonSuffixPattern, { parseAs: 'buffer' }, parser);
}

import { errorCodes, type FastifyInstance } from 'fastify';
import type { ApiError } from '../../errors.js';
import { mediaTypeEntryOf } from '../../openapi/mediaTypes.js';
import { refuseContentEncoding } from './jsonBody.js';

/**
 * Reads a body whose media type's entry (src/openapi/mediaTypes.ts) says `parse: 'bytes'` as the bytes sent:
 * a Buffer, never decoded, within the route's body limit (fastify stops reading past it: a 413). fastify
 * matches parsers by Content-Type, not by an entry's rule, so this is its catch-all parser and asks the
 * entry; a media type no entry reads as bytes (no Content-Type at all, say) stays fastify's 415. The route
 * refused a type it does not declare before the body was read (glue.ts), and validates what it declares.
 */
export function registerBytesParser(app: FastifyInstance): void {
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    if (mediaTypeEntryOf(request.headers['content-type'] ?? '')?.parse !== 'bytes') {
      done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(), undefined);
      return;
    }
    try {
      refuseContentEncoding(request);
    } catch (refusal) {
      done(refusal as ApiError, undefined);
      return;
    }
    done(null, body);
  });
}

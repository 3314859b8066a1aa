import { readPetPage, readPetsByIds } from '../db/pets.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { errorResult } from './errorResult.js';
import { isAssignableId } from './petIds.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

const defaultLimit = 20;
const unissuedCursor =
  "query parameter 'cursor' is not a cursor this service issued; take it from the Link header of the previous page";

export function listPets({ db, basePath }: HandlerDeps): Handler<'listPets'> {
  // Built as text, not with URLSearchParams (a few µs per page): the limit is
  // an integer, the status one of the spec's words (encoded all the same) and
  // the cursor base64url, so nothing else would need encoding.
  function nextPageLink(limit: number, status: string | undefined, lastId: number): string {
    const statusPart = status ? `&status=${encodeURIComponent(status)}` : '';
    return `<${basePath}/pets?limit=${limit}${statusPart}&cursor=${encodeCursor(lastId)}>; rel="next"`;
  }
  return async ({ query }): Promise<HandlerResult<'listPets'>> => {
    const afterId = query.cursor === undefined ? 0 : decodeCursor(query.cursor);
    if (afterId === undefined) return errorResult(400, 'invalid_request', unissuedCursor);
    if (query.id) {
      // One page of the matches after the cursor, at most limit of them (all
      // when absent: no more than id's 100); ids the service never assigns
      // match nothing and are not quoted.
      const ids = [...new Set(query.id)].filter((id) => isAssignableId(id) && id > afterId);
      const pets = ids.length === 0 ? [] : await readPetsByIds(db, ids, query.status);
      return { status: 200, body: query.limit === undefined ? pets : pets.slice(0, query.limit) };
    }
    const limit = query.limit ?? defaultLimit;
    // One row more than asked tells whether a next page exists.
    const rows = await readPetPage(db, { afterId, status: query.status, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    if (rows.length <= limit || !last) return { status: 200, body: page };
    return { status: 200, body: page, headers: { Link: nextPageLink(limit, query.status, last.id) } };
  };
}

import { listPets as selectPets } from '../db/pets.js';
import { apiPrefix } from '../contract.js';
import { decodeCursor, encodeCursor } from '../http/cursor.js';
import type { Handler, HandlerDeps } from './types.js';

function nextPageLink(limit: number, status: string | undefined, lastId: number): string {
  const query = new URLSearchParams({ limit: String(limit) });
  if (status) query.set('status', status);
  query.set('cursor', encodeCursor(lastId));
  return `<${apiPrefix}/pets?${query}>; rel="next"`;
}

export function listPets({ db }: HandlerDeps): Handler<'listPets'> {
  return async ({ query }) => {
    const limit = query.limit ?? 20;
    const afterId = query.cursor === undefined ? 0 : decodeCursor(query.cursor);
    // One row more than asked tells whether a next page exists.
    const rows = await selectPets(db, { afterId, status: query.status, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const headers: Record<string, string> = rows.length > limit && last ? { link: nextPageLink(limit, query.status, last.id) } : {};
    return { status: 200, body: page, headers };
  };
}

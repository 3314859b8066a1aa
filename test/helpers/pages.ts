/** A pet as listPets answers it. */
export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: string;
}

/** Pages a walk follows before it calls the chain endless. */
const maxPages = 10_000;

/**
 * Every pet, from `${api}/pets?limit=${limit}` page by page through Link
 * rel="next", in the order the pages gave them, so that a pet listed twice
 * across pages would show. Each page is one request, given 15 s and not
 * retried; an answer other than 200 throws.
 */
export async function walkPets(api: string, apiKey: string, limit: number): Promise<Pet[]> {
  const pets: Pet[] = [];
  let url: string | undefined = `${api}/pets?limit=${limit}`;
  for (let page = 0; url !== undefined; page += 1) {
    if (page === maxPages) throw new Error(`${api}/pets: the Link chain does not end after ${maxPages} pages`);
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${apiKey}` },
      signal: AbortSignal.timeout(15_000),
    });
    if (response.status !== 200) throw new Error(`GET ${url}: ${response.status} ${await response.text()}`);
    pets.push(...((await response.json()) as Pet[]));
    const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    url = next === undefined ? undefined : new URL(next, url).toString();
  }
  return pets;
}

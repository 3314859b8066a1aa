import { countActiveApiKeys, insertApiKey, insertApiKeyIfNew } from '../db/apiKeys.js';
import type { Database } from '../db/index.js';
import { generateApiKey, hashApiKey, toStoredKey } from './keys.js';

/**
 * Stores BOOTSTRAP_API_KEY (hashed) unless it is there already. Its name is
 * derived from its hash, so restarts with the same key change nothing and a
 * new bootstrap key sits beside the old one until that is revoked.
 */
export async function storeBootstrapKey(db: Database, key: string): Promise<void> {
  const name = `bootstrap-${hashApiKey(key).slice(0, 8)}`;
  await insertApiKeyIfNew(db, toStoredKey(name, key));
}

/** Creates a first key when none is active; returns it (to be shown once) or undefined. */
export async function createFirstKeyIfNone(db: Database): Promise<string | undefined> {
  return db.transaction(async (tx) => {
    if ((await countActiveApiKeys(tx)) > 0) return undefined;
    const key = generateApiKey();
    await insertApiKey(tx, toStoredKey(`default-${Date.now()}`, key));
    return key;
  });
}

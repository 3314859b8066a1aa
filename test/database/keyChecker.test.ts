import t from 'tap';
import { createKeyChecker } from '../../src/auth/keyChecker.js';
import { generateApiKey, toStoredKey } from '../../src/auth/keys.js';
import { createKeyUseRecorder } from '../../src/auth/keyUse.js';
import { insertApiKey, listApiKeys } from '../../src/db/apiKeys.js';
import { DatabaseUnavailableError, type KeyChange, type KeyChangeFeed, type Queryable } from '../../src/db/index.js';
import type { Statement } from '../../src/db/types.js';
import { openBackend } from '../helpers/databases.js';
import { passTimeInDatabase } from '../helpers/keysApp.js';

t.test('accepted and refused keys are remembered for cacheSeconds', async (t) => {
  const { db, close } = await openBackend('embedded');
  t.teardown(close);
  let clock = 0;
  let lookUps = 0;
  const counting: Queryable = {
    query: (statement, values) => {
      lookUps += 1;
      return db.query(statement, values);
    },
    execScript: (sql) => db.execScript(sql),
  };
  const checker = createKeyChecker({ db: counting, cacheSeconds: 5, now: () => clock });
  const good = generateApiKey();
  await insertApiKey(db, toStoredKey('good', good));
  const wrong = generateApiKey();

  t.equal(checker.remembered(good), undefined, 'nothing is known before a look-up');
  t.ok(await checker.lookUp(good));
  t.match(checker.remembered(good), { keyId: Number }, 'accepted: known without hashing or a query');
  t.equal(await checker.lookUp(wrong), 'unknown');
  t.equal(await checker.lookUp(wrong), 'unknown');
  t.equal(lookUps, 2, 'a refused key is not looked up again within cacheSeconds');
  clock = 5000;
  t.equal(checker.remembered(good), 'recently-good', 'its time is up, but it was good');
  t.equal(await checker.lookUp(wrong), 'unknown');
  t.equal(lookUps, 3, 'a refused key is looked up again after cacheSeconds');
});

/** A feed the test drives: it announces changes and says whether they are heard. */
function drivenFeed(live: boolean) {
  const listeners = new Set<(change: KeyChange) => void>();
  const feed: KeyChangeFeed & { announce(change: KeyChange): void; isLive: boolean } = {
    isLive: live,
    live: () => feed.isLive,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    announce(change) {
      for (const listener of listeners) listener(change);
    },
  };
  return { feed, listeners };
}

t.test('a key change the database announces forgets that key at once, "all" every key', async (t) => {
  const { db, close } = await openBackend('embedded');
  t.teardown(close);
  const { feed, listeners } = drivenFeed(true);
  const checker = createKeyChecker({ db, cacheSeconds: 300, changes: feed });
  const first = generateApiKey();
  const second = generateApiKey();
  const firstId = (await insertApiKey(db, toStoredKey('first', first))).id;
  await insertApiKey(db, toStoredKey('second', second));
  await checker.lookUp(first);
  await checker.lookUp(second);
  t.match(checker.remembered(first), { keyId: firstId });

  feed.announce({ keyId: firstId });
  t.equal(checker.remembered(first), undefined, 'the changed key is forgotten: its next use is looked up');
  t.match(checker.remembered(second), { keyId: Number }, 'another key stays remembered');
  feed.announce('all');
  t.equal(checker.remembered(second), undefined, '"all" forgets every key');
  checker.close();
  t.equal(listeners.size, 0, 'close stops hearing changes');
});

t.test('a look-up that overlaps a change is answered but not remembered', async (t) => {
  const { db, close } = await openBackend('embedded');
  t.teardown(close);
  const { feed } = drivenFeed(true);
  const key = generateApiKey();
  const keyId = (await insertApiKey(db, toStoredKey('racing', key))).id;
  // The change is announced while the look-up's statement is out: it may have read the key as it was.
  const announcing: Queryable = {
    query: async <Row>(statement: Statement, values?: readonly unknown[]) => {
      const result = await db.query<Row>(statement, values);
      feed.announce({ keyId });
      return result;
    },
    execScript: (sql) => db.execScript(sql),
  };
  const checker = createKeyChecker({ db: announcing, cacheSeconds: 300, changes: feed });
  t.match(await checker.lookUp(key), { keyId }, 'answered');
  t.equal(checker.remembered(key), undefined, 'not remembered');
});

t.test('while the database is unavailable, a key accepted before stays accepted for a while', async (t) => {
  const { db, close } = await openBackend('embedded');
  t.teardown(close);
  let clock = 0;
  let unavailable = false;
  const failing: Queryable = {
    query: (statement, values) =>
      unavailable
        ? Promise.reject(
            new DatabaseUnavailableError(new Error('connect ECONNREFUSED'), 'the database could not be reached'),
          )
        : db.query(statement, values),
    execScript: (sql) => db.execScript(sql),
  };
  const { feed } = drivenFeed(true);
  const checker = createKeyChecker({ db: failing, cacheSeconds: 5, now: () => clock, changes: feed });
  const good = generateApiKey();
  await insertApiKey(db, toStoredKey('good', good));
  const accepted = await checker.lookUp(good);
  t.ok(accepted);

  unavailable = true;
  clock = 20_000;
  t.same(await checker.lookUp(good), accepted, 'past cacheSeconds, the failed look-up keeps the key accepted');
  feed.isLive = false;
  await t.rejects(
    checker.lookUp(good),
    DatabaseUnavailableError,
    'but not while key changes are not heard: a revocation may have been missed, cacheSeconds is the bound',
  );
  feed.isLive = true;
  await t.rejects(checker.lookUp(generateApiKey()), DatabaseUnavailableError, 'an unknown key is not accepted');
  clock = 5_000 + 60_000;
  await t.rejects(checker.lookUp(good), DatabaseUnavailableError, 'not for longer than a minute past its time');
  unavailable = false;
  t.same(await checker.lookUp(good), accepted, 'asked again once the database answers');
});

t.test('a cached key is never accepted past its expiry, nor while the database is away', async (t) => {
  const { db, close } = await openBackend('embedded');
  t.teardown(close);
  let unavailable = false;
  const failing: Queryable = {
    query: (statement, values) =>
      unavailable
        ? Promise.reject(new DatabaseUnavailableError(new Error('connect ECONNREFUSED'), 'unreachable'))
        : db.query(statement, values),
    execScript: (sql) => db.execScript(sql),
  };
  let clock = Date.now();
  const checker = createKeyChecker({ db: failing, cacheSeconds: 3600, now: () => clock });
  const key = generateApiKey();
  await insertApiKey(db, toStoredKey('expiring', key), { expiresInSeconds: 60 });
  t.match(await checker.lookUp(key), { keyId: Number }, 'accepted before its expiry');
  t.match(checker.remembered(key), { keyId: Number }, 'and remembered for cacheSeconds');
  clock += 61_000;
  await passTimeInDatabase(db, 61_000);
  t.equal(checker.remembered(key), 'recently-good', 'past its expiry, the cache does not accept it');
  unavailable = true;
  await t.rejects(checker.lookUp(key), DatabaseUnavailableError, 'nor does an outage');
  unavailable = false;
  t.equal(await checker.lookUp(key), 'expired', 'the look-up says why');
  t.equal(await checker.lookUp(key), 'expired', 'and the refusal is remembered with its reason');
});

t.test('a key whose checksum does not match is refused before hashing or a query', async (t) => {
  let queries = 0;
  const none: Queryable = {
    query: () => {
      queries += 1;
      return Promise.reject(new Error('no query expected'));
    },
    execScript: () => Promise.reject(new Error('no script expected')),
  };
  const checker = createKeyChecker({ db: none, cacheSeconds: 0 });
  const key = generateApiKey();
  const mistyped = `${key.slice(0, -1)}${key.endsWith('0') ? '1' : '0'}`;
  t.equal(await checker.lookUp(mistyped), 'mistyped');
  t.equal(queries, 0);
});

t.test('last uses are written by a timer, one statement per interval, and on stop', async (t) => {
  const { db, close } = await openBackend('embedded');
  t.teardown(close);
  const writes: string[] = [];
  const watched: Queryable = {
    query: (statement, values) => {
      writes.push(statement.text);
      return db.query(statement, values);
    },
    execScript: (sql) => db.execScript(sql),
  };
  const first = await insertApiKey(db, toStoredKey('first', generateApiKey()));
  const second = await insertApiKey(db, toStoredKey('second', generateApiKey()));
  const recorder = createKeyUseRecorder({ db: watched });
  for (let use = 0; use < 100; use += 1) recorder.record(use % 2 ? first.id : second.id);
  t.same(writes, [], 'recording writes nothing');
  const flushed = new Promise<void>((resolve) => {
    const poll = setInterval(() => {
      if (writes.length > 0) {
        clearInterval(poll);
        resolve();
      }
    }, 5);
  });
  recorder.start(20);
  await flushed;
  t.equal(writes.length, 1, 'one statement for 100 uses of 2 keys');
  const stored = await listApiKeys(db);
  t.ok(
    stored.every((key) => key.lastUsedAt !== null),
    'both keys have their last use',
  );
  recorder.record(first.id);
  await recorder.stop();
  t.equal(writes.length, 2, 'stop writes what is left');
  await recorder.stop();
  t.equal(writes.length, 2, 'and nothing when nothing is left');
});

import t from 'tap';
import { createKeyChecker } from '../../src/auth/keyChecker.js';
import { generateApiKey, toStoredKey } from '../../src/auth/keys.js';
import { insertApiKey } from '../../src/db/apiKeys.js';
import { DatabaseUnavailableError, type Queryable } from '../../src/db/index.js';
import { openBackend } from '../helpers/databases.js';

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
  t.equal(await checker.lookUp(wrong), undefined);
  t.equal(await checker.lookUp(wrong), undefined);
  t.equal(lookUps, 2, 'a refused key is not looked up again within cacheSeconds');
  clock = 5000;
  t.equal(checker.remembered(good), 'recently-good', 'its time is up, but it was good');
  t.equal(await checker.lookUp(wrong), undefined);
  t.equal(lookUps, 3, 'a refused key is looked up again after cacheSeconds');
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
  const checker = createKeyChecker({ db: failing, cacheSeconds: 5, now: () => clock });
  const good = generateApiKey();
  await insertApiKey(db, toStoredKey('good', good));
  const accepted = await checker.lookUp(good);
  t.ok(accepted);

  unavailable = true;
  clock = 20_000;
  t.same(await checker.lookUp(good), accepted, 'past cacheSeconds, the failed look-up keeps the key accepted');
  await t.rejects(checker.lookUp(generateApiKey()), DatabaseUnavailableError, 'an unknown key is not accepted');
  clock = 5_000 + 60_000;
  await t.rejects(checker.lookUp(good), DatabaseUnavailableError, 'not for longer than a minute past its time');
  unavailable = false;
  t.same(await checker.lookUp(good), accepted, 'asked again once the database answers');
});

import t from 'tap';
import { createKeyChecker } from '../src/auth/keyChecker.js';
import { generateApiKey, toStoredKey } from '../src/auth/keys.js';
import { insertApiKey } from '../src/db/apiKeys.js';
import type { Queryable } from '../src/db/index.js';
import { openBackend } from './helpers/databases.js';

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

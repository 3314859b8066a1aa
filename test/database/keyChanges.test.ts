import t, { type Test } from 'tap';
import pg from 'pg';
import { waitUntil } from '../../lib/instances/index.js';
import { issueKey, rotateKey } from '../../src/auth/provisioning.js';
import { recordApiKeyUses, revokeApiKeyByName } from '../../src/db/apiKeys.js';
import { keyChangesChannel } from '../../src/db/keyChanges.js';
import { openDatabase, type Database, type KeyChange } from '../../src/db/index.js';
import { migrate } from '../../src/db/migrations.js';
import {
  createScratchPostgres,
  openBackend,
  postgresUnavailableReason,
  scratchPostgresDatabase,
} from '../helpers/databases.js';
import { TcpProxy } from '../helpers/tcpProxy.js';

const noPostgres = await postgresUnavailableReason();

function hear(t: Test, db: Database): KeyChange[] {
  const changes: KeyChange[] = [];
  t.teardown(db.keyChanges.subscribe((change) => changes.push(change)));
  return changes;
}

const until = (what: string, ready: () => boolean) =>
  waitUntil({ what, timeoutMs: 10_000, intervalMs: 10 }, () => Promise.resolve(ready() ? true : undefined));

/** What the database announces, on both backends: committed changes that can make a remembered key invalid. */
async function announcesCommittedChanges(t: Test, db: Database): Promise<void> {
  const changes = hear(t, db);
  await until('listening', () => db.keyChanges.live());
  changes.length = 0;
  const issued = await issueKey(db, 'announced');
  await recordApiKeyUses(db, [{ keyId: issued.record.id, usedAt: new Date() }]);
  const rotation = await rotateKey(db, 'announced', { overlapSeconds: 0 }, (rotated) => rotated);
  await until('the rotation announced', () => changes.length > 0);
  t.same(
    changes,
    [{ keyId: issued.record.id }],
    'a rotation announces the key it cut short; a new key or a use nothing',
  );
  changes.length = 0;
  await t.rejects(
    db.transaction(async (tx) => {
      await revokeApiKeyByName(tx, 'announced');
      throw new Error('rolled back');
    }),
  );
  await revokeApiKeyByName(db, 'announced');
  await until('the revocation announced', () => changes.length >= 2);
  t.same(
    changes.map((change) => (change === 'all' ? change : change.keyId)).sort(),
    [issued.record.id, rotation?.record.id].sort(),
    'a committed revocation announces each key it revoked; the rolled-back one nothing',
  );
}

t.test('the embedded database announces key changes in-process', async (t) => {
  const opened = await openBackend('embedded');
  t.teardown(opened.close);
  t.ok(opened.db.keyChanges.live(), 'always heard: one session, in this process');
  await announcesCommittedChanges(t, opened.db);
});

t.test(
  'PostgreSQL: LISTEN on a connection of its own; a lost one is re-established and says "all"',
  { skip: noPostgres ?? false },
  async (t) => {
    const scratch = await createScratchPostgres();
    t.teardown(scratch.drop);
    const states: string[] = [];
    const db = await openDatabase({
      url: scratch.url,
      poolSize: 2,
      keyChanges: { url: scratch.url, onState: (state) => states.push(state) },
    });
    t.teardown(() => db.close());
    await migrate(db);
    await announcesCommittedChanges(t, db);

    const changes = hear(t, db);
    const admin = new pg.Client({ connectionString: scratch.url });
    await admin.connect();
    t.teardown(() => admin.end());
    const { rows } = await admin.query<{ ended: boolean }>(
      `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
      WHERE datname = current_database() AND query = $1`,
      [`LISTEN ${keyChangesChannel}`],
    );
    t.same(
      rows.map((row) => row.ended),
      [true],
      'one listening session, ended',
    );
    await until('listening again', () => changes.includes('all') && db.keyChanges.live());
    t.same(states, ['listening', 'lost', 'listening'], 'the loss and the return are reported');
    changes.length = 0;
    const issued = await issueKey(db, 'after-the-loss');
    await revokeApiKeyByName(db, 'after-the-loss');
    await until('a revocation after the loss', () => changes.length > 0);
    t.same(changes, [{ keyId: issued.record.id }], 'changes are heard again');
  },
);

t.test(
  'PostgreSQL: a listening connection that goes silent (a partition) is noticed by its heartbeat',
  { skip: noPostgres ?? false },
  async (t) => {
    const scratch = await createScratchPostgres();
    t.teardown(scratch.drop);
    const target = new URL(scratch.url);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.open();
    t.teardown(() => proxy.close());
    const viaProxy = new URL(scratch.url);
    viaProxy.port = String(proxy.port);
    const states: string[] = [];
    const db = await openDatabase({
      url: scratch.url,
      poolSize: 1,
      keyChanges: { url: viaProxy.toString(), heartbeatMs: 200, onState: (state) => states.push(state) },
    });
    t.teardown(() => db.close());
    const changes = hear(t, db);
    await until('listening', () => db.keyChanges.live());
    proxy.freeze();
    await until('the silent connection taken for lost', () => states.includes('lost'));
    await until('listening again, on a new connection', () => db.keyChanges.live());
    t.same(states, ['listening', 'lost', 'listening']);
    t.same(changes, ['all', 'all'], 'every key forgotten each time it listens');
  },
);

t.test('PostgreSQL without a place to listen hears nothing, and says so', { skip: noPostgres ?? false }, async (t) => {
  const { db } = await scratchPostgresDatabase(t, 1);
  t.notOk(db.keyChanges.live(), 'not live: each remembered key is trusted for its cache time only');
});

import { randomBytes } from 'node:crypto';
import t from 'tap';
import { createFirstKeyIfNone, issueKey, rotateKey } from '../src/auth/provisioning.js';
import { runApiKey, runApiKeyCommand } from '../src/cli/apikey.js';
import { insertApiKey, listApiKeyNames } from '../src/db/apiKeys.js';
import { bootstrapKeyProblem, checksumVerdict, generateApiKey, hashApiKey, toStoredKey } from '../src/auth/keys.js';
import type { Database } from '../src/db/index.js';
import { forEachBackend } from './helpers/app.js';
import { newPet, sharedKeysDatabase, startKeysApp } from './helpers/keysApp.js';
import { runInProcess } from './helpers/processes.js';

const pets = '/v1/pets';
const hour = 3_600_000;
const expiredChallenge = 'Bearer realm="pets", error="invalid_token", error_description="The API key has expired"';

const lastLine = (text: string) => text.trimEnd().split('\n').pop() ?? '';

/** CRC-32 written bit by bit, apart from the service's table: the test's own reading of the format. */
function referenceCrc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function referenceBase62(value: number): string {
  const digits = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let text = '';
  for (let rest = value; rest > 0; rest = Math.floor(rest / 62)) text = digits[rest % 62] + text;
  return text.padStart(6, '0');
}

t.test('the reference CRC-32 is the standard one', async (t) => {
  t.equal(referenceCrc32('123456789'), 0xcbf43926, 'the check value of CRC-32/ISO-HDLC');
  t.equal(referenceBase62(0), '000000');
  t.equal(referenceBase62(0xffffffff), '4gfFC3');
});

forEachBackend(t, async (t, backend) => {
  // One database for the tests here that keep theirs open; the two that hand theirs to the CLI open their own.
  const database = await sharedKeysDatabase(t, backend);

  t.test('scopes come from the spec: a read-only key lists and is refused on create', async (t) => {
    const keys = await startKeysApp(t, database);
    const reader = await keys.issue('reader', { scopes: ['pets:read'] });
    const writer = await keys.issue('writer', { scopes: ['pets:write'] });
    const both = await keys.issue('both');

    t.equal((await keys.get(pets, reader)).statusCode, 200, 'pets:read lists');
    const refused = await keys.post(pets, reader, newPet);
    t.equal(refused.statusCode, 403);
    t.equal(
      refused.headers['www-authenticate'],
      'Bearer realm="pets", error="insufficient_scope", scope="pets:write"',
      'RFC 6750 3.1, the scope named',
    );
    t.match(refused.json(), { code: 'insufficient_scope', status: 403, message: /pets:write/ });
    t.ok(refused.headers['x-request-id'], 'with the request id');

    const created = await keys.post(pets, writer, newPet);
    t.equal(created.statusCode, 201, 'pets:write creates');
    const id = (created.json() as { id: number }).id;
    const readRefused = await keys.get(`${pets}/${id}`, writer);
    t.equal(readRefused.statusCode, 403, 'a write-only key cannot read');
    t.equal(
      readRefused.headers['www-authenticate'],
      'Bearer realm="pets", error="insufficient_scope", scope="pets:read"',
    );
    t.equal((await keys.get(pets, writer)).statusCode, 403);

    t.equal((await keys.post(pets, both, newPet)).statusCode, 201, 'a key made without scopes has both');
    t.equal((await keys.get(pets, both)).statusCode, 200);
  });

  t.test('an expiring key works, then gets 401 invalid_token, even while cached', async (t) => {
    const keys = await startKeysApp(t, database, { API_KEY_CACHE_SECONDS: 600 });
    const key = await keys.issue('short-lived', { expiresInSeconds: 60 });
    t.equal((await keys.get(pets, key)).statusCode, 200);
    t.equal((await keys.get(pets, key)).statusCode, 200, 'accepted from the cache');
    // Past the expiry, well within the 600 s the cache keeps an accepted key.
    await keys.passTime(120_000);
    const expired = await keys.get(pets, key);
    t.equal(expired.statusCode, 401);
    t.equal(expired.headers['www-authenticate'], expiredChallenge);
    t.match(expired.json(), { code: 'unauthorized', status: 401 });
    t.same(keys.failures, ['expired'], 'counted as expired');
  });

  t.test('rotate --overlap: the new key works, the old one too until the overlap ends', async (t) => {
    const keys = await startKeysApp(t, database);
    const old = await keys.issue('rotated', { scopes: ['pets:read'] });
    const rotation = await rotateKey(keys.db, 'rotated', { overlapSeconds: 3600 }, (rotated) => rotated);
    if (!rotation) throw new Error('the key was not rotated');
    t.not(rotation.key, old);
    t.same(rotation.record.scopes, ['pets:read'], 'the same scopes');
    t.equal(rotation.record.name, 'rotated', 'the same name');
    t.equal((await keys.get(pets, rotation.key)).statusCode, 200, 'the new key works');
    t.equal((await keys.get(pets, old)).statusCode, 200, 'the old key works during the overlap');
    t.equal((await keys.post(pets, rotation.key, newPet)).statusCode, 403, 'the new key keeps the old scopes');
    await keys.passTime(2 * hour);
    const refused = await keys.get(pets, old);
    t.equal(refused.statusCode, 401, 'the old key is refused once the overlap ends');
    t.equal(refused.headers['www-authenticate'], expiredChallenge);
    t.equal((await keys.get(pets, rotation.key)).statusCode, 200, 'the new key goes on');
    t.equal(
      await rotateKey(keys.db, 'no-such-key', { overlapSeconds: 60 }, (rotated) => rotated),
      undefined,
      'a name without a key is not rotated',
    );
  });

  t.test('a mistyped key is refused with no database query, counted apart', async (t) => {
    const keys = await startKeysApp(t, database);
    const key = await keys.issue('typist');
    const last = key.at(-1) === 'a' ? 'b' : 'a';
    const mistyped = key.slice(0, -1) + last;
    const swapped = key.slice(0, 10) + key[11] + key[10] + key.slice(12);
    t.equal((await keys.get(pets, key)).statusCode, 200, 'the key as issued works');
    keys.statements.length = 0;
    keys.failures.length = 0;
    for (const wrong of [mistyped, key[11] === key[10] ? mistyped : swapped]) {
      const refused = await keys.get(pets, wrong);
      t.equal(refused.statusCode, 401);
      t.equal(refused.headers['www-authenticate'], 'Bearer realm="pets", error="invalid_token"');
      t.match(refused.json(), { code: 'unauthorized', message: /checksum/ });
    }
    // (The idempotency-key purge runs on its own timer: only key look-ups count.)
    const lookUps = keys.statements.filter((statement) => /api_keys/.test(statement.text));
    t.same(lookUps, [], 'no key was looked up');
    t.same(keys.failures, ['checksum', 'checksum'], 'counted as checksum failures, not invalid');
    const unknown = await keys.issue('unknown');
    await keys.db.query({ text: "DELETE FROM api_keys WHERE name = 'unknown'" });
    keys.statements.length = 0;
    t.equal((await keys.get(pets, unknown)).statusCode, 401, 'a well-formed key that is not stored');
    t.ok(
      keys.statements.some((statement) => /api_keys/.test(statement.text)),
      'is looked up (the check above would see a query)',
    );
  });

  t.test('keys issued before the checksum keep working', async (t) => {
    const keys = await startKeysApp(t, database);
    const legacy = `pets_${randomBytes(32).toString('base64url')}`;
    await insertApiKey(keys.db, toStoredKey('legacy', legacy));
    t.equal((await keys.get(pets, legacy)).statusCode, 200);
    t.equal((await keys.post(pets, legacy, newPet)).statusCode, 201, 'with every scope');
  });

  t.test('last use: recorded in memory, written in one statement per flush, shown by list --json', async (t) => {
    const keys = await startKeysApp(t, backend);
    const first = await keys.issue('first');
    const second = await keys.issue('second');
    const unused = await keys.issue('unused');
    t.ok(unused);
    keys.statements.length = 0;
    const usedAt = Date.now();
    for (let request = 0; request < 10; request += 1) {
      t.equal((await keys.get(pets, request % 2 ? first : second)).statusCode, 200);
    }
    const writes = () => keys.statements.filter((statement) => /last_used_at/.test(statement.text));
    t.same(writes(), [], 'no write on the request path');
    await keys.release();
    t.equal(writes().length, 1, 'one statement for both keys, on close');
    const listed = await runInProcess((streams) => runApiKey(['list', '--json'], keys.backend.env, streams));
    t.equal(listed.code, 0, listed.stderr);
    const rows = JSON.parse(listed.stdout) as { name: string; lastUsedAt: string | null; scopes: string[] }[];
    for (const name of ['first', 'second']) {
      const row = rows.find((candidate) => candidate.name === name);
      const lastUsed = Date.parse(row?.lastUsedAt ?? '');
      t.ok(lastUsed >= usedAt - 1000 && lastUsed <= Date.now(), `${name}: lastUsedAt is the time of its use`);
    }
    t.match(
      rows.find((row) => row.name === 'unused'),
      { lastUsedAt: null, scopes: ['*'] },
    );
  });

  t.test('the CLI: create with scopes and expiry, the checksum at the end, rotate, list --json', async (t) => {
    const { backend: opened, release } = await startKeysApp(t, backend);
    await release();
    const apikey = (args: string[]) => runInProcess((streams) => runApiKey(args, opened.env, streams));

    const created = await apikey(['create', 'dashboard', '--scopes', 'pets:read', '--expires-in', '90d']);
    t.equal(created.code, 0, created.stderr);
    const key = lastLine(created.stdout);
    t.match(key, /^pets_[0-9A-Za-z]{49}$/, 'the key alone on the last line');
    t.equal(key.slice(-6), referenceBase62(referenceCrc32(key.slice(0, -6))), 'its last 6 characters are its checksum');

    const rotated = await apikey(['rotate', 'dashboard', '--overlap', '12h']);
    t.equal(rotated.code, 0, rotated.stderr);
    const next = lastLine(rotated.stdout);
    t.match(next, /^pets_[0-9A-Za-z]{49}$/);
    t.not(next, key);

    const listed = await apikey(['list', '--json']);
    const rows = JSON.parse(listed.stdout) as Record<string, unknown>[];
    t.equal(rows.length, 2);
    const [old, current] = rows as [Record<string, string>, Record<string, string>];
    t.same(Object.keys(old).sort(), [
      'createdAt',
      'expiresAt',
      'fingerprint',
      'format',
      'id',
      'lastUsedAt',
      'name',
      'replaces',
      'revokedAt',
      'scopes',
    ]);
    t.match(old, { name: 'dashboard', scopes: ['pets:read'], lastUsedAt: null, revokedAt: null });
    t.match(current, { name: 'dashboard', scopes: ['pets:read'] });
    const day = 24 * hour;
    t.ok(Math.abs(Date.parse(old.expiresAt ?? '') - (Date.now() + 12 * hour)) < 60_000, 'the old key: the overlap');
    t.ok(Math.abs(Date.parse(current.expiresAt ?? '') - (Date.now() + 90 * day)) < 60_000, 'the new: the same 90 days');

    for (const [args, message] of [
      [['create', 'x', '--scopes', 'pets:delete'], /Unknown scope pets:delete/],
      [['create', 'x', '--expires-in', '3w'], /--expires-in takes a whole number of days/],
      [['create', 'x', '--expires-in', '0s'], /--expires-in takes a whole number of days/],
      [['rotate', 'dashboard'], /--overlap/],
      [['rotate', 'nobody', '--overlap', '1h'], /No active key is named nobody/],
      [['list', '--frobnicate'], /Unknown option/],
    ] as const) {
      const refused = await apikey([...args]);
      t.equal(refused.code, 2, args.join(' '));
      t.match(refused.stderr, message);
    }
    t.equal((await apikey(['create', 'dashboard'])).code, 2, 'a name in use is refused, rotated or not');
    const revoked = await apikey(['revoke', 'dashboard']);
    t.equal(revoked.code, 0);
    const afterRevoke = JSON.parse((await apikey(['list', '--json'])).stdout) as { revokedAt: string | null }[];
    t.ok(
      afterRevoke.every((row) => row.revokedAt !== null),
      'revoking the name revokes the old key in its overlap too',
    );
  });
});

/** Every stored row, every column: what a refused command must leave exactly as it was. */
async function storedRows(db: Database): Promise<unknown[]> {
  const { rows } = await db.query<Record<string, unknown>>({ text: 'SELECT * FROM api_keys ORDER BY id' });
  return rows.map((row) => JSON.parse(JSON.stringify(row)) as unknown);
}

/** A key that expires in 99999999 days: past year 275760, out of a JavaScript Date's range, as stored before bounds. */
const farBeyondDateRangeSeconds = 99_999_999 * 86_400;

forEachBackend(t, async (t, backend) => {
  const database = await sharedKeysDatabase(t, backend);
  /** A command on the test's open database: the same code the entry point runs once it has opened one. */
  const onDb = (db: Database, args: string[]) => runInProcess((streams) => runApiKeyCommand(db, args, streams));

  t.test('durations out of bounds: exit 2 naming the form, and the table exactly as it was', async (t) => {
    const keys = await startKeysApp(t, database);
    await keys.issue('ov');
    const before = await storedRows(keys.db);
    const form = 'takes a whole number of days, hours, minutes or seconds';
    for (const [args, message] of [
      [
        ['create', 'n3', '--expires-in', '99999999d'],
        `--expires-in ${form} above 0: 90d, 12h, 30m, 45s, at most 366d; got 99999999d`,
      ],
      [['create', 'n3', '--expires-in', '367d'], 'at most 366d; got 367d'],
      [
        ['create', 'n3', '--expires-in', '-1'],
        `--expires-in ${form} above 0: 90d, 12h, 30m, 45s, at most 366d; got -1`,
      ],
      [['create', 'n3', '--expires-in', '999999999999999d'], 'got 999999999999999d'],
      [['rotate', 'ov', '--overlap', '99999999d'], `--overlap ${form}: 90d, 12h, 30m, 45s, at most 30d; got 99999999d`],
      [['rotate', 'ov', '--overlap', '999999999h'], 'at most 30d; got 999999999h'],
      [['rotate', 'ov', '--overlap', '999999999d'], 'at most 30d; got 999999999d'],
      [['rotate', 'ov', '--overlap', '31d'], 'at most 30d; got 31d'],
      [['rotate', 'ov', '--overlap', '-1s'], 'at most 30d; got -1s'],
      [['rotate', 'ov', '--overlap', '1h', '--expires-in', '400d'], 'at most 366d; got 400d'],
    ] as const) {
      const refused = await onDb(keys.db, [...args]);
      t.equal(refused.code, 2, args.join(' '));
      if (message.startsWith('--')) t.equal(refused.stderr, `${message}\n`, args.join(' '));
      else t.match(refused.stderr, message, args.join(' '));
      t.notMatch(refused.stderr, /ambiguous|RangeError|out of range/);
    }
    t.same(await storedRows(keys.db), before, 'no row added or changed');
    t.equal((await onDb(keys.db, ['create', 'n3', '--expires-in', '366d'])).code, 0, 'the bound itself is accepted');
    t.equal((await onDb(keys.db, ['rotate', 'ov', '--overlap', '30d'])).code, 0, 'the overlap bound too');
  });

  t.test('a failure after the write and before the commit stores nothing: no key stored unshown', async (t) => {
    const keys = await startKeysApp(t, database);
    await keys.issue('ov');
    const before = await storedRows(keys.db);
    const failing = () => {
      throw new Error('cannot show it');
    };
    await t.rejects(issueKey(keys.db, 'lost', {}, failing), /cannot show it/);
    await t.rejects(rotateKey(keys.db, 'ov', { overlapSeconds: 60 }, failing), /cannot show it/);
    t.same(await storedRows(keys.db), before, 'the insert and the rotation were rolled back');
  });

  t.test('a stored expiry beyond the range of a Date: list shows it, rotate asks for a lifetime', async (t) => {
    const keys = await startKeysApp(t, database);
    await insertApiKey(keys.db, toStoredKey('far', generateApiKey()), { expiresInSeconds: farBeyondDateRangeSeconds });
    const text = await onDb(keys.db, ['list']);
    t.equal(text.code, 0, text.stderr);
    t.match(text.stdout, /\tfar\t.*\tactive until out of range\t/);
    const json = await onDb(keys.db, ['list', '--json']);
    t.equal(json.code, 0, json.stderr);
    t.match(JSON.parse(json.stdout), [{ name: 'far', expiresAt: 'out of range' }]);

    const before = await storedRows(keys.db);
    const inherited = await onDb(keys.db, ['rotate', 'far', '--overlap', '1h']);
    t.equal(inherited.code, 2);
    t.match(inherited.stderr, /beyond 366d.*--expires-in/);
    t.same(await storedRows(keys.db), before, 'the refused rotation changed nothing');
    const rotated = await onDb(keys.db, ['rotate', 'far', '--overlap', '1h', '--expires-in', '30d']);
    t.equal(rotated.code, 0, rotated.stderr);
    t.equal((await onDb(keys.db, ['revoke', 'far'])).code, 0);
  });

  t.test('list tells the truth: id, fingerprint, format, * for every scope, the key a rotation replaced', async (t) => {
    const keys = await startKeysApp(t, database);
    const all = await keys.issue('all');
    await keys.issue('reader', { scopes: ['pets:read'] });
    const legacy = `pets_${randomBytes(32).toString('base64url')}`;
    const stored = await insertApiKey(keys.db, toStoredKey('legacy', legacy));
    await rotateKey(keys.db, 'reader', { overlapSeconds: 60 }, () => undefined);

    const json = await onDb(keys.db, ['list', '--json']);
    t.equal(json.code, 0, json.stderr);
    const rows = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    t.match(rows, [
      {
        id: 1,
        name: 'all',
        fingerprint: `sha256:${hashApiKey(all).slice(0, 8)}`,
        format: 'checksummed',
        scopes: ['*'],
      },
      { id: 2, name: 'reader', scopes: ['pets:read'], replaces: null },
      { id: stored.id, name: 'legacy', format: 'legacy', scopes: ['*'], replaces: null },
      { id: 4, name: 'reader', scopes: ['pets:read'], format: 'checksummed', replaces: 2 },
    ]);
    t.equal(rows[0]?.['replaces'], null);

    const text = await onDb(keys.db, ['list']);
    const [header, ...lines] = text.stdout.trimEnd().split('\n');
    t.equal(header, 'id\tname\tfingerprint\tformat\tcreated\tstate\tscopes\tlast use\treplaces');
    t.match(
      lines[0],
      new RegExp(
        `^1\tall\tsha256:${hashApiKey(all).slice(0, 8)}\tchecksummed\tcreated \\S+\tactive\t\\*\tnever used\t-$`,
      ),
    );
    t.match(lines[2], /^3\tlegacy\tsha256:[0-9a-f]{8}\tlegacy\t/);
    t.match(lines[3], /^4\treader\t.*\tpets:read\tnever used\t2$/);
  });

  t.test('revoke --legacy: keys without a checksum get 401, checksummed ones go on', async (t) => {
    const keys = await startKeysApp(t, database);
    const checksummed = await keys.issue('checksummed');
    const legacy = `pets_${randomBytes(32).toString('base64url')}`;
    await insertApiKey(keys.db, toStoredKey('legacy', legacy));
    t.equal((await keys.get(pets, legacy)).statusCode, 200, 'accepted until revoked');
    const revoked = await onDb(keys.db, ['revoke', '--legacy']);
    t.equal(revoked.code, 0, revoked.stderr);
    t.match(revoked.stdout, /^Revoked key id \d+ \(name legacy, fingerprint sha256:[0-9a-f]{8}\)\n$/);
    t.equal((await keys.get(pets, legacy)).statusCode, 401, 'the key without a checksum is refused');
    t.equal((await keys.get(pets, checksummed)).statusCode, 200, 'the checksummed key is accepted');
    t.equal((await onDb(keys.db, ['revoke', '--legacy'])).stdout, 'No active legacy key.\n');
  });

  t.test('the first key is named default, then default-2 if a revoked key has the name', async (t) => {
    const keys = await startKeysApp(t, database);
    const first = await createFirstKeyIfNone(keys.db);
    t.equal(checksumVerdict(first ?? ''), 'matches');
    t.same(await listApiKeyNames(keys.db), ['default']);
    t.equal(await createFirstKeyIfNone(keys.db), undefined, 'none while a key is active');
    t.equal((await onDb(keys.db, ['revoke', 'default'])).code, 0);
    t.ok(await createFirstKeyIfNone(keys.db));
    t.same((await listApiKeyNames(keys.db)).sort(), ['default', 'default-2']);
  });
});

t.test('--help and -h exit 0 on every command, before any database is opened', async (t) => {
  const nowhere = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };
  for (const args of [
    ['--help'],
    ['-h'],
    ['create', '--help'],
    ['rotate', '-h'],
    ['list', '--help'],
    ['revoke', '--help'],
    ['new', '--help'],
  ]) {
    const help = await runInProcess((streams) => runApiKey(args, nowhere, streams));
    t.equal(help.code, 0, args.join(' '));
    t.match(help.stdout, /^Usage: npm run apikey -- <command>/);
    t.equal(help.stderr, '');
  }
  const literal = await runInProcess((streams) => runApiKey(['create', '--', '--help'], nowhere, streams));
  t.not(literal.code, 0, 'after --, --help is an argument');
});

t.test('apikey new prints a fresh checksummed key without a database', async (t) => {
  const nowhere = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };
  const made = await runInProcess((streams) => runApiKey(['new'], nowhere, streams));
  t.equal(made.code, 0, made.stderr);
  t.match(made.stdout, /^pets_[0-9A-Za-z]{49}\n$/);
  t.equal(checksumVerdict(made.stdout.trim()), 'matches');
  t.equal(bootstrapKeyProblem(made.stdout.trim()), undefined, 'it is a valid bootstrap key');
  t.not((await runInProcess((streams) => runApiKey(['new'], nowhere, streams))).stdout, made.stdout);
});

t.test('which bootstrap keys are accepted', async (t) => {
  const key = generateApiKey();
  const wrongChecksum = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
  for (const [candidate, problem] of [
    [key, undefined],
    [`pets_${randomBytes(32).toString('base64url')}`, undefined],
    [randomBytes(32).toString('hex'), undefined],
    [randomBytes(16).toString('hex'), undefined],
    [randomBytes(24).toString('base64'), undefined],
    [wrongChecksum, /checksum does not match/],
    ['a'.repeat(40), /too easy to guess/],
    ['changeme'.repeat(5), /too easy to guess/],
    [randomBytes(15).toString('hex'), /too easy to guess/],
  ] as const) {
    const found = bootstrapKeyProblem(candidate);
    if (problem === undefined) t.equal(found, undefined, `${candidate.length} characters accepted`);
    else t.match(found, problem, candidate.slice(0, 12));
  }
});

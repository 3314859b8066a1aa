import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import t from 'tap';
import { formats, scalarViolations, valid } from '../../lib/conformance/arbitraries.js';
import type { Schema } from '../../lib/conformance/spec.js';
import { createAjv } from '../../src/http/operations/ajv.js';
import { forEachBackend, startTestApp } from '../helpers/app.js';

// The request generator (lib/conformance/arbitraries.ts) and the service agree on formats: every
// value it calls valid passes the service's ajv (its options and formats, src/http/operations/ajv.ts)
// and is stored by PostgreSQL; every value it makes to break a format is refused by that ajv.

const serviceAjv = createAjv({ coerceTypes: false, useDefaults: true, removeAdditional: false, verbose: true });
const names = Object.keys(formats);
const schemaOf = (format: string, extra: Record<string, unknown> = {}) =>
  ({ type: 'string', format, ...extra }) as Schema;
const numRuns = 300;

t.test('the generator knows date, date-time, email, uuid and uri', async (t) => {
  t.same(names.sort(), ['date', 'date-time', 'email', 'uri', 'uuid']);
});

t.test("valid values of every format pass the service's ajv", async (t) => {
  for (const format of names) {
    for (const schema of [schemaOf(format), schemaOf(format, { maxLength: 40 })]) {
      const check = serviceAjv.compile(schema);
      fc.assert(
        fc.property(valid(schema), (value) => check(value)),
        { numRuns, seed: 52 },
      );
      t.pass(`${format} ${JSON.stringify(schema)}`);
    }
  }
});

t.test("values that break a format are refused by the service's ajv, year 0000 among them", async (t) => {
  for (const format of names) {
    const schema = schemaOf(format);
    const check = serviceAjv.compile(schema);
    const violation = scalarViolations(schema).find(({ rule }) => rule === 'format');
    if (!violation) {
      t.fail(`no format violation for ${format}`);
      continue;
    }
    fc.assert(
      fc.property(violation.values, (value) => !check(value)),
      { numRuns, seed: 52 },
    );
    t.pass(format);
  }
  const samples = (format: string) =>
    fc.sample(scalarViolations(schemaOf(format)).find(({ rule }) => rule === 'format')!.values, {
      numRuns: 2000,
      seed: 1,
    });
  t.ok(samples('date').includes('0000-01-01'), 'a date in year 0000 is a violation');
  t.ok(samples('date-time').includes('0000-01-01T00:00:00Z'), 'a date-time in year 0000 is a violation');
  const date = serviceAjv.compile(schemaOf('date'));
  const dateTime = serviceAjv.compile(schemaOf('date-time'));
  t.equal(date('0000-01-01'), false);
  t.equal(date('0001-01-01'), true);
  t.equal(date('9999-12-31'), true);
  t.equal(dateTime('0000-12-31T23:59:59Z'), false);
  t.equal(dateTime('0001-01-01T00:00:00+15:59'), true);
  t.equal(dateTime('2024-01-01T00:00:00+16:00'), false, 'PostgreSQL refuses offsets past 15:59');
});

t.test('valid strings hold no U+0000, which no PostgreSQL text can', async (t) => {
  fc.assert(
    fc.property(valid({ type: 'string', maxLength: 50 } as Schema), (text) => !(text as string).includes('\u0000')),
    { numRuns: 2000, seed: 52 },
  );
  t.pass();
});

t.test('PostgreSQL stores every valid date, date-time and uuid as the column type', (t) =>
  forEachBackend(t, async (t, backend) => {
    const { db } = await startTestApp(t, backend);
    const columns: Record<string, string> = { date: 'date', 'date-time': 'timestamptz', uuid: 'uuid' };
    for (const [format, type] of Object.entries(columns)) {
      const values = fc.sample(valid(schemaOf(format)), { numRuns: 200, seed: 52 });
      // One statement per format: an array of every value, each cast.
      const result = await db.query<{ count: number }>(
        { text: `SELECT count(v::${type})::int AS count FROM unnest($1::text[]) AS v` },
        [values],
      );
      t.equal(result.rows[0]?.count, values.length, format);
    }
    const texts = fc.sample(valid({ type: 'string', maxLength: 60 } as Schema), { numRuns: 200, seed: 52 });
    const stored = await db.query<{ count: number }>(
      { text: 'SELECT count(v)::int AS count FROM unnest($1::text[]) AS v' },
      [texts],
    );
    t.equal(stored.rows[0]?.count, texts.length, 'text');
  }),
);

// A format's values all have the length a bound asks for (a uuid's 36 characters): the values breaking minLength are
// drawn outside the format, or drawing them never ends. In a child process, so that a draw that never ends fails.
t.test(
  'every format with the length bounds of its values yields values breaking each rule, and ajv refuses them',
  async (t) => {
    const bounds: Record<string, { minLength: number; maxLength: number }> = {
      date: { minLength: 10, maxLength: 10 },
      'date-time': { minLength: 20, maxLength: 40 },
      email: { minLength: 6, maxLength: 60 },
      uuid: { minLength: 36, maxLength: 36 },
      uri: { minLength: 10, maxLength: 200 },
    };
    t.same(Object.keys(bounds).sort(), names.sort(), 'every format the generator knows');
    const script = `
    import fc from 'fast-check';
    import { scalarViolations } from ${JSON.stringify(new URL('../../lib/conformance/arbitraries.ts', import.meta.url).href)};
    const schemas = JSON.parse(process.argv[1]);
    const drawn = {};
    for (const [format, bound] of Object.entries(schemas))
      for (const { rule, values } of scalarViolations({ type: 'string', format, ...bound }))
        drawn[format + ' ' + rule] = fc.sample(values, { numRuns: 50, seed: 52 });
    process.stdout.write(JSON.stringify(drawn));`;
    const child = spawnSync(
      process.execPath,
      ['--import=tsx', '--input-type=module', '-e', script, JSON.stringify(bounds)],
      {
        encoding: 'utf8',
        // SIGKILL: tsx's loader answers SIGTERM by relaying it, which a draw that never ends never sees.
        timeout: 30_000,
        killSignal: 'SIGKILL',
      },
    );
    t.equal(child.signal, null, `the draws end (${child.stderr.slice(0, 500)})`);
    if (child.status !== 0) return t.fail(child.stderr.slice(0, 2000));
    const drawn = JSON.parse(child.stdout) as Record<string, unknown[]>;
    for (const [format, bound] of Object.entries(bounds)) {
      const check = serviceAjv.compile(schemaOf(format, bound));
      for (const rule of ['minLength', 'maxLength', 'format']) {
        const values = drawn[`${format} ${rule}`] ?? [];
        t.ok(values.length > 0, `${format} ${rule}: values drawn`);
        t.ok(
          values.every((value) => !check(value)),
          `${format} ${rule}: every value refused`,
        );
      }
    }
  },
);

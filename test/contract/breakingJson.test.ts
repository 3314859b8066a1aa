// npm run contract -- breaking --json: a versioned document that validates against contract/breaking.schema.json,
// whose keys are those a comparison of review --json (contract/review.schema.json) uses for the same things, and
// whose schema refuses a field renamed, so a rename cannot pass unnoticed.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { lastReleased } from '../../lib/contract/released.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { breakingFormat, runBreaking, type BreakingReport } from '../../scripts/contract/breaking.js';
import { scratchDir } from '../helpers/scratchSpace.js';

const schemaOf = (name: string) =>
  JSON.parse(readFileSync(join(repoRoot, 'contract', name), 'utf8')) as JsonObject & {
    properties: Record<string, JsonObject>;
    $defs: Record<string, JsonObject>;
  };
const breakingSchema = schemaOf('breaking.schema.json');
const reviewSchema = schemaOf('review.schema.json');
const validate = new Ajv2020({ strict: true, allErrors: true }).compile(breakingSchema);

const dir = scratchDir('pets-breaking-json-');
t.teardown(() => {
  dir.remove();
});

/** The released contract against openapi.yaml with a lower body limit and a shorter name: breaking, with a value. */
function breakingHead(): string {
  const spec = parse(readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8'), { intAsBigInt: true }) as {
    paths: Record<string, Record<string, JsonObject>>;
    components: { schemas: Record<string, { properties: Record<string, JsonObject> }> };
  };
  (spec.paths['/pets']!['post']!['requestBody'] as JsonObject)['x-body-limit-bytes'] = 1024;
  spec.components.schemas['NewPet']!.properties['name'] = { type: 'string', minLength: 1, maxLength: 10 };
  const file = join(dir.path, 'head.yaml');
  writeFileSync(file, stringify(spec));
  return file;
}

function reportOf(args: string[]): { status: number; report: BreakingReport } {
  const lines: string[] = [];
  const status = runBreaking([...args, '--json'], { out: (text) => lines.push(text), err: (text) => lines.push(text) });
  return { status, report: JSON.parse(lines.join('\n')) as BreakingReport };
}

const date = '2026-12-02';
const head = breakingHead();
/** breaking --json of `head` against the last release (the default base), once: every test reads it, none edits it. */
const breakingRun = reportOf(['--head', head, '--date', date]);

t.test('breaking --json is versioned and validates against contract/breaking.schema.json', async (t) => {
  const { status, report } = breakingRun;
  t.ok(validate(report), 'valid', { errors: validate.errors });
  t.equal(status, 1, 'a breaking change: exit 1');
  t.equal(report.version, breakingFormat);
  t.equal(report.version, (breakingSchema.properties['version'] as JsonObject)['const'], 'the schema says its version');
  t.equal(report.date, '2026-12-02');
  t.match(report.base, { source: relative(repoRoot, lastReleased()), released: true });
  t.match(report.gate, { passed: false, majorMoved: false });
  const breaking = report.changes.filter((change) => change.level === 'breaking');
  t.equal(report.gate.breaking, breaking.length, 'gate.breaking counts the breaking changes');
  t.equal(report.counts.breaking, breaking.length);
  t.equal(
    Object.values(report.counts).reduce((sum, count) => sum + count, 0),
    report.changes.length,
    'counts add up to the changes',
  );
  t.ok(
    report.changes.some((change) => change.rule === 'request-body-limit-decreased'),
    'the lowered limit among them',
  );
  t.ok(
    report.changes.some((change) => change.counterExample !== undefined),
    'a change with its counter-example validates too',
  );

  const unchanged = reportOf(['--base', 'openapi.yaml', '--head', 'openapi.yaml']);
  t.equal(unchanged.status, 0);
  t.ok(validate(unchanged.report), 'no change at all is valid too', { errors: validate.errors });
  t.same(unchanged.report.counts, { breaking: 0, warning: 0, additive: 0, none: 0 });
});

t.test('a field renamed, at the top, in the gate or in a change, fails the schema', async (t) => {
  const { report } = breakingRun;
  type Holder = Record<string, unknown>;
  /** A copy of the report with the field `from` of the object at `path` (from the top) renamed `to`. */
  const renamed = (path: string[], from: string, to: string) => {
    const copy = structuredClone(report) as unknown as Holder;
    const holder = path.reduce<Holder>((node, step) => node[step] as Holder, copy);
    holder[to] = holder[from];
    delete holder[from];
    return copy;
  };
  const renames: Record<string, Holder> = {
    'version → format': renamed([], 'version', 'format'),
    'changes → list': renamed([], 'changes', 'list'),
    'gate.breaking → gate.breakingCount': renamed(['gate'], 'breaking', 'breakingCount'),
    'base.source → base.file': renamed(['base'], 'source', 'file'),
    'counts.none → counts.other': renamed(['counts'], 'none', 'other'),
    'a change’s rule → id': renamed(['changes', '0'], 'rule', 'id'),
  };
  for (const [name, copy] of Object.entries(renames)) t.notOk(validate(copy), name);
});

t.test('the keys review --json has for the same things are named and shaped alike', async (t) => {
  const comparison = (reviewSchema.$defs['comparison'] as { properties: Record<string, JsonObject> }).properties;
  for (const key of ['base', 'head', 'counts'])
    t.same(breakingSchema.properties[key], comparison[key], `${key}: as in a review's comparison`);
  t.same(breakingSchema.properties['date'], reviewSchema.properties['date'], 'date: as in the review');
  for (const name of ['change', 'level', 'count'])
    t.same(breakingSchema.$defs[name], reviewSchema.$defs[name], `$defs.${name}: as in the review`);
  const gate = breakingSchema.properties['gate'] as { properties: Record<string, JsonObject> };
  const reviewGate = comparison['gate'] as { properties: Record<string, JsonObject> };
  for (const key of Object.keys(reviewGate.properties))
    t.ok(key in gate.properties, `gate.${key}: the review's gate field is the gate's too`);
});

// npm run contract -- review is `tsx scripts/contract/review.ts` (scripts/run.sh; reviewPullRequests.test.ts runs it
// through npm), and breaking's process prints what runBreaking writes (breakingCorpus.test.ts runs it through npm):
// one review process, started by node itself, shows what review --json prints; breaking's document is the one above.
t.test('review --json, as a process, prints the shape breaking --json prints for the same things', async (t) => {
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      'scripts/contract/review.ts',
      '--base',
      lastReleased(),
      '--head',
      head,
      '--date',
      date,
      '--json',
    ],
    { cwd: repoRoot, encoding: 'utf8' },
  );
  t.equal(result.status, 0, 'the review is no verdict', { stderr: result.stderr });
  const review = JSON.parse(result.stdout) as JsonObject;
  const validateReview = new Ajv2020({ strict: true, allErrors: true }).compile(reviewSchema);
  t.ok(validateReview(review), 'review: valid against contract/review.schema.json', { errors: validateReview.errors });
  const breaking = breakingRun.report as unknown as JsonObject;
  t.same([breaking['version'], breaking['date']], [review['version'], review['date']], 'the same version and date');
  const [comparison] = review['comparisons'] as JsonObject[];
  for (const key of ['base', 'head', 'counts'])
    t.same(breaking[key], comparison?.[key], `${key}: what the review's comparison says`);
  t.match(breaking['gate'], comparison?.['gate'], "gate: the review's gate fields, the same values");
});

// The breaking-change corpora: single edits of today's openapi.yaml (breakingCorpus.yaml, breakingCorpusClients.yaml,
// breakingCorpusConstructs.yaml), each through the gate's entry point: every breaking edit exits 1 naming its rule,
// every safe edit exits 0, every unchanged edit (the same contract written otherwise) reports no change; an edit that
// writes a construct docs/constructs.md refuses for the gate is refused by it (exit 2), and judged as the corpus says
// by the diff beneath, for the day the construct is supported. One goes through
// `npm run contract -- breaking` as a process (its exit code and output); all call the same command in this process.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parse, stringify } from 'yaml';
import { refusals } from '../../../lib/constructs/refusals.js';
import { opened, validatorOf } from '../../../lib/contract/admitted.js';
import { loadContract } from '../../../lib/contract/load.js';
import { dereference, isObject, type Json, type JsonObject } from '../../../lib/openapi/dereference.js';
import { repoRoot } from '../../../lib/repoRoot.js';
import { breakingReport, runBreaking } from '../../../scripts/contract/breaking.js';
import { scratchDir } from '../../helpers/scratchSpace.js';

interface Operation {
  op: 'add' | 'remove' | 'replace';
  path: string;
  value?: unknown;
}
interface Edit {
  label: string;
  note?: string;
  expect: 'breaking' | 'safe' | 'unchanged';
  /** The level the named change must have. */
  level?: string;
  /** The named change must carry a counter-example that the two contracts judge as it says. */
  counterExample?: boolean;
  /** Rules that must be reported beside it. */
  also?: string[];
  patch: Operation[];
}

const read = (name: string) => parse(readFileSync(join(repoRoot, 'test/contract', name), 'utf8')) as Edit[];
const firstCorpus = read('breakingCorpus.yaml');
const clientCorpus = read('breakingCorpusClients.yaml');
const constructCorpus = read('breakingCorpusConstructs.yaml');
const corpus = [...firstCorpus, ...clientCorpus, ...constructCorpus];
const specText = readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8');

/** RFC 6902 add, remove and replace; a path that does not exist is an error in the corpus, not a silent no-op. */
function applyPatch(document: unknown, patch: Operation[]): void {
  for (const { op, path, value } of patch) {
    const steps = path
      .split('/')
      .slice(1)
      .map((step) => step.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = steps.pop()!;
    let parent = document as Record<string, unknown>;
    for (const step of steps) {
      const next = parent[step];
      if (typeof next !== 'object' || next === null) throw new Error(`corpus patch: no ${path}`);
      parent = next as Record<string, unknown>;
    }
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : Number(last);
      if (op !== 'add' && !(index in parent)) throw new Error(`corpus patch: no ${path}`);
      if (op === 'add') parent.splice(index, 0, value);
      else if (op === 'remove') parent.splice(index, 1);
      else parent[index] = value;
      continue;
    }
    if (op !== 'add' && !(last in parent)) throw new Error(`corpus patch: no ${path}`);
    if (op === 'remove') delete parent[last];
    else parent[last] = value;
  }
}

const dir = scratchDir('pets-corpus-');
t.teardown(() => {
  dir.remove();
});
const base = join(dir.path, 'base.yaml');
const today = new Date().toISOString().slice(0, 10);
writeFileSync(base, specText);

// Parsed once and copied for each edit: a parse of openapi.yaml costs more than the comparison it feeds.
const specDocument = parse(specText, { intAsBigInt: true }) as unknown;
const headFiles = new Map<number, string>();

/** The edited copy of openapi.yaml, int64 bounds written as the digits they are; written once an edit. */
function headFor(edit: Edit, index: number): string {
  const written = headFiles.get(index);
  if (written !== undefined) return written;
  const document = structuredClone(specDocument);
  applyPatch(document, edit.patch);
  const file = join(dir.path, `head-${index}.yaml`);
  writeFileSync(file, stringify(document));
  headFiles.set(index, file);
  return file;
}

interface ReportedChange {
  rule: string;
  level: string;
  pointer: string;
  side: 'base' | 'head';
  consumer: string;
  counterExample?: { value: unknown; acceptedBy: 'base' | 'head'; refusedBy: 'base' | 'head' };
}

let dereferencedSpec: JsonObject | undefined;
/** openapi.yaml dereferenced, once: the counter-examples only read it. */
const baseDocument = () => (dereferencedSpec ??= dereference(parse(specText) as JsonObject));

/**
 * The counter-example checked on its own: the schema of its place in each contract (dereferenced), compiled by
 * ajv, accepts and refuses it as the change says (a response's base judged with its objects open).
 */
function checkCounterExample(t: Test, edit: Edit, index: number, change: ReportedChange) {
  const documents = {
    base: baseDocument(),
    head: dereference(parse(readFileSync(headFor(edit, index), 'utf8')) as JsonObject),
  };
  const example = change.counterExample!;
  const placeOf = (side: 'base' | 'head') => {
    let node: Json | undefined = documents[side];
    const steps = change.pointer
      .split('/')
      .slice(1)
      .map((step) => step.replace(/~1/g, '/').replace(/~0/g, '~'));
    // The place's schema: the pointer up to the schema of its parameter, body or header.
    const end = steps.lastIndexOf('schema');
    for (const step of steps.slice(0, end + 1))
      node = isObject(node) ? node[step] : Array.isArray(node) ? node[Number(step)] : undefined;
    return node;
  };
  const response = change.pointer.includes('/responses/');
  const accepting = placeOf(example.acceptedBy);
  const refusing = placeOf(example.refusedBy);
  const judge = (schema: Json | undefined, side: 'base' | 'head') =>
    validatorOf(response && side === 'base' ? opened(schema ?? true) : (schema ?? true), 'test')(example.value);
  t.ok(judge(accepting, example.acceptedBy), `accepted by the ${example.acceptedBy}`, { example });
  t.notOk(judge(refusing, example.refusedBy), `refused by the ${example.refusedBy}`, { example });
}

const ruleNamed = (output: string, rule: string) => new RegExp(`^  [x!] (breaking|warning) ${rule} `, 'm').test(output);

t.test('the corpus holds at least 40 edits, breaking and safe', async (t) => {
  t.ok(firstCorpus.length >= 40, `${firstCorpus.length} edits`);
  t.ok(clientCorpus.length >= 30, `${clientCorpus.length} edits of other kinds`);
  t.ok(corpus.some((edit) => edit.expect === 'safe'));
  t.ok(corpus.some((edit) => edit.label === 'response-optional-property-added' && edit.expect === 'safe'));
});

t.test('an unedited copy passes with no change', async (t) => {
  const lines: string[] = [];
  const status = runBreaking(['--base', base, '--head', headFor({ label: 'none', expect: 'safe', patch: [] }, -1)], {
    out: (text) => lines.push(text),
    err: (text) => lines.push(text),
  });
  t.equal(status, 0);
  t.match(lines.join('\n'), /: 0 changes/);
});

/**
 * The command's verdict on an edit: its exit code and --json report. A head using a construct the catalogue refuses
 * for the gate is refused (exit 2, generate's report naming each); the diff's own judgement of it, which the corpus
 * states for the day the construct is supported, is then taken from the report the command would have written.
 */
function verdictOn(t: Test, edit: Edit, index: number): { status: number; report: { changes: ReportedChange[] } } {
  const head = headFor(edit, index);
  const lines: string[] = [];
  const status = runBreaking(['--base', base, '--head', head, '--json'], {
    out: (text) => lines.push(text),
    err: (text) => lines.push(text),
  });
  const refused = refusals(parse(readFileSync(head, 'utf8')) as JsonObject, ['contract']);
  if (refused.length === 0) return { status, report: JSON.parse(lines.join('\n')) as { changes: ReportedChange[] } };
  t.equal(status, 2, 'a refused construct: exit 2');
  for (const { id } of refused) t.match(lines.join('\n'), `- ${id} at #`, `names ${id}`);
  const report = breakingReport(loadContract(base), loadContract(head), today);
  return { status: report.gate.passed ? 0 : 1, report: report as { changes: ReportedChange[] } };
}

corpus.forEach((edit, index) => {
  const name = `${edit.expect} ${edit.label}${edit.note ? ` (${edit.note})` : ''}`;
  t.test(name, async (t) => {
    const { status, report } = verdictOn(t, edit, index);
    const named = report.changes.filter((change) => change.rule === edit.label);
    for (const rule of edit.also ?? [])
      t.ok(
        report.changes.some((change) => change.rule === rule),
        `also reports ${rule}`,
        { changes: report.changes },
      );
    if (edit.level)
      t.ok(
        named.some((change) => change.level === edit.level),
        `${edit.label} at level ${edit.level}`,
        { changes: report.changes },
      );
    t.ok(
      report.changes.every((change) => change.consumer.length > 0),
      'every change has its consumer sentence',
    );
    if (edit.counterExample) {
      const shown = named.find((change) => change.level === 'breaking' && change.counterExample);
      t.ok(shown, 'a counter-example', { changes: report.changes });
      if (shown?.counterExample) checkCounterExample(t, edit, index, shown);
    }
    if (edit.expect === 'breaking') {
      t.equal(status, 1, 'exit 1', { changes: report.changes });
      t.ok(
        named.some((change) => change.level === 'breaking'),
        `names ${edit.label} as breaking`,
        { changes: report.changes },
      );
    } else {
      t.equal(status, 0, 'exit 0', { changes: report.changes });
      if (edit.expect === 'safe') t.ok(named.length > 0, `reports ${edit.label}`, { changes: report.changes });
      else t.same(report.changes, [], 'no change at all');
    }
  });
});

t.test('end to end through npm run contract -- breaking', async (t) => {
  // A process costs seconds of CPU: one breaking edit shows the process's exit code and output.
  const label = 'response-header-removed';
  const index = corpus.findIndex((edit) => edit.label === label);
  const result = spawnSync(
    'npm',
    ['run', '--silent', 'contract', '--', 'breaking', '--base', base, '--head', headFor(corpus[index]!, index)],
    { cwd: repoRoot, encoding: 'utf8' },
  );
  t.equal(corpus[index]!.expect, 'breaking');
  t.equal(result.status, 1, 'exit 1', { output: result.stdout + result.stderr });
  t.ok(ruleNamed(result.stdout, label), 'names its rule', { output: result.stdout });
});

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ensurePackages } from '../../lib/instances/index.js';
import { ruleSettingsOf } from '../../lib/objectives/settings.js';
import { pageTestFile, promtool, ruleTestFileOf, rulesFolder, verdicts } from '../helpers/promtool.js';

/**
 * The shipped rules (deploy/prometheus/objectives.yml and alerts.yml,
 * generated) pass `promtool check rules`, and their shipped unit tests pass
 * `promtool test rules deploy/prometheus/*.test.yml`, one call as an
 * operator runs them, but for the pages' tests (two minutes of promtool).
 * Those, and that each broken rule fails its scenario, are the system
 * suite's (test/rules/mutations.test.ts): more than npm test can spend.
 *
 * promtool is Debian's prometheus package: installed here as root when
 * missing (.ci/run installs it first); only a non-root run without it skips.
 */

const settings = ruleSettingsOf(process.env);
const shipped = readdirSync(rulesFolder)
  .filter((file) => file.endsWith('.test.yml'))
  .sort();
const unavailable = ensurePackages((line) => process.stderr.write(`# ${line}\n`), ['prometheus']);
const asRoot = process.getuid?.() === 0;

t.test(
  'the rules pass promtool check and their shipped unit tests',
  { skip: !asRoot && unavailable ? `promtool is missing: ${unavailable}` : false },
  async (t) => {
    if (unavailable) {
      t.fail(`promtool could not be installed as root: ${unavailable}`);
      return;
    }
    const check = await promtool(['check', 'rules', 'objectives.yml', 'alerts.yml']);
    t.equal(check.status, 0, `promtool check rules: ${check.output}`);
    // The shipped scrape configuration: the service, the probe of /healthz the alerts read, the rules beside it.
    const config = await promtool(['check', 'config', 'prometheus.yml']);
    t.equal(config.status, 0, `promtool check config prometheus.yml: ${config.output}`);
    t.match(config.output, /2 rule files found/, 'it loads both rule files');
    t.same(shipped, ['alerts.test.yml', pageTestFile, 'objectives.test.yml'], 'both rule files have their tests');
    for (const file of shipped)
      t.same(
        ruleTestFileOf(join(rulesFolder, file)).rule_files,
        [file.replace(/(-pages)?\.test\.yml$/, '.yml')],
        `${file} tests the rules beside it`,
      );

    const runbooks = ['objectives.yml', 'alerts.yml'].flatMap((file) =>
      [...readFileSync(join(rulesFolder, file), 'utf8').matchAll(/runbook_url: (\S+)/g)].map((match) => match[1]!),
    );
    t.ok(runbooks.length >= 8, 'every alert has a runbook_url');
    const headings = new Set(
      [...readFileSync(join(rulesFolder, '../../docs/alerts.md'), 'utf8').matchAll(/^## (\w+)$/gm)].map((m) =>
        m[1]!.toLowerCase(),
      ),
    );
    for (const url of new Set(runbooks))
      t.ok(headings.has(url.split('#')[1]!), `docs/alerts.md has a section for ${url}`);
    for (const url of runbooks) t.ok(url.startsWith(`${settings.runbookBase}#pets`), `runbook_url is absolute: ${url}`);
    // Each alert's section opens with what it does to a person, as the rule says: "Page." or "Ticket.".
    const alertsDoc = readFileSync(join(rulesFolder, '../../docs/alerts.md'), 'utf8');
    const severities = ['objectives.yml', 'alerts.yml'].flatMap((file) =>
      [...readFileSync(join(rulesFolder, file), 'utf8').matchAll(/- alert: (\w+)\n[\s\S]*?severity: (\w+)/g)].map(
        (match) => [match[1]!, match[2]!] as const,
      ),
    );
    for (const [alert, severity] of new Map(severities)) {
      const opening = new RegExp(`^## ${alert}\\n\\n(\\w+)\\.`, 'm').exec(alertsDoc)?.[1];
      t.equal(opening?.toLowerCase(), severity, `docs/alerts.md says ${alert} is a ${severity}`);
    }

    const started = Date.now();
    const quick = shipped.filter((file) => file !== pageTestFile);
    const run = await promtool(['test', 'rules', ...quick]);
    t.comment(`promtool test rules over ${quick.join(', ')}: ${Date.now() - started} ms`);
    t.equal(run.status, 0, `promtool test rules passes: ${run.output.slice(0, 3000)}`);
    const byFile = verdicts(run.stdout);
    for (const file of quick) t.match(byFile.get(file), /^\s*SUCCESS/, `${file} passes as shipped`);
  },
);

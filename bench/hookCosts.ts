// npm run bench -- hooks [seconds]: what each stage of our request path costs inside the server under
// load, where a microbenchmark understates it (caches are cold between two calls of the same code).
// Copies dist/ to dist-timed/ (beside node_modules), wraps the stages below with bench/hookTimer.mjs's
// __timed (each call timed until it returns or calls its `done`), runs each of the four loads against
// it (pinned like the bench, 20 connections) and prints µs per call. The wrapping adds two
// hrtime reads per stage; the server as a whole is slower than dist/, so read these as shares.
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { repoRoot } from '../lib/repoRoot.js';
import { benchDatabase, drive, fmt, namedScenarios, pinSelf, recreateDatabase, seedPets, startServer } from './lib.js';

const seconds = Number(process.argv[2] ?? '8');
const timedDir = join(repoRoot, 'dist-timed');

/** [file under dist/, text to find, its replacement]: each must match once, or the stage moved. */
const patches: [string, string | RegExp, string][] = [
  [
    'app.js',
    "routedPipeline('whole', [...arrival.steps, ...admitted])",
    "__timed('arrival + admission (one hook)', routedPipeline('whole', [...arrival.steps, ...admitted]))",
  ],
  [
    'http/observation/stage.js',
    '[lines.record, recordDuration]',
    "[__timed('log line', lines.record), __timed('duration metric', recordDuration)]",
  ],
  [
    'http/operations/answer.js',
    'export function answerFor(',
    "const timedTagged = __timed('ETag', tagged);\nexport function answerFor(",
  ],
  [
    'http/operations/answer.js',
    'tagged(request, reply, json, conditional)',
    'timedTagged(request, reply, json, conditional)',
  ],
  [
    'http/operations/glue.js',
    /handler: (toRouteHandler\([^;]*?conditionalFactsOf\(spec, operation, route, routes\)\))/,
    "handler: __timed('handler (until it waits)', $1)",
  ],
  [
    'http/operations/serialization.js',
    'return serializer()(document);',
    "return __timed('serialization', serializer())(document);",
  ],
  [
    'http/operations/validation.js',
    'return (data) => {\n            const notFound',
    "return __timed('request validation', (data) => {\n            const notFound",
  ],
  [
    'http/operations/validation.js',
    'validation: validate.errors }) };\n        };',
    'validation: validate.errors }) };\n        });',
  ],
  ['http/operations/validation.js', 'return validateBody;', "return __timed('request validation', validateBody);"],
  ['http/operations/responseAjv.js', 'return validate;', "return __timed('response validation', validate);"],
];

function instrument(): void {
  rmSync(timedDir, { recursive: true, force: true });
  cpSync(join(repoRoot, 'dist'), timedDir, { recursive: true });
  for (const [file, find, replace] of patches) {
    const path = join(timedDir, file);
    const text = readFileSync(path, 'utf8');
    const matches =
      typeof find === 'string' ? text.split(find).length - 1 : (text.match(new RegExp(find, 'g')) ?? []).length;
    if (matches !== 1)
      throw new Error(`bench hooks: ${file} has ${matches} matches for ${String(find)}; update the patch`);
    writeFileSync(path, text.replace(find, replace));
  }
}

instrument();
const urls = await benchDatabase();
pinSelf();
const key = `bench_${randomBytes(24).toString('base64url')}`;
const authorization = `Bearer ${key}`;

await recreateDatabase(urls);
const maxId = await seedPets(urls.bench, 10000);
const rows = new Map<string, Map<string, number>>();
const scenarios = Object.values(namedScenarios(maxId));
for (const scenario of scenarios) {
  const server = await startServer({
    name: 'ours, timed',
    args: ['--import', join(repoRoot, 'bench/hookTimer.mjs'), 'dist-timed/server.js'],
    env: {
      DATABASE_URL: urls.bench,
      BOOTSTRAP_API_KEY: key,
      LOG_LEVEL: 'info',
      RATE_LIMIT_MAX: '1000000',
      DRAIN_DELAY_MS: '0',
    },
    port: 3290,
    cores: '1',
    authorization,
  });
  await drive(server, scenario, { seconds: 3, connections: 20, authorization });
  const sample = await drive(server, scenario, { seconds, connections: 20, authorization });
  await server.stop();
  // The lines written at SIGTERM may reach us just after the exit.
  await sleep(300);
  process.stderr.write(`${scenario.name}: ${fmt(sample.rps)} req/s, ${fmt(sample.cpuUsPerRequest, 1)} µs CPU/req\n`);
  for (const line of server.stderr().split('\n')) {
    const timed = /^TIMED (.+) (\d+) ([\d.]+)$/.exec(line);
    if (!timed) continue;
    const [, stage = '', calls = '0', ns = '0'] = timed;
    // A stage the load does not run was timed only by the start-up probe (GET /v1/pets?limit=1).
    if (Number(calls) < sample.requests / 2) continue;
    if (!rows.has(stage)) rows.set(stage, new Map());
    rows.get(stage)?.set(scenario.name, Number(ns) / 1000);
  }
}
const names = scenarios.map((scenario) => scenario.name);
process.stdout.write(
  `| stage (µs per call, under load) | ${names.join(' | ')} |\n|---|${names.map(() => '---|').join('')}\n`,
);
for (const [stage, byScenario] of rows) {
  process.stdout.write(
    `| ${stage} | ${names.map((name) => (byScenario.has(name) ? fmt(byScenario.get(name) ?? 0, 1) : '-')).join(' | ')} |\n`,
  );
}
rmSync(timedDir, { recursive: true, force: true });
process.exit(0);

// npm run bench -- variants <list20|list100|getPet|createPet> '<JSON array>' [seconds] [rounds]: servers of
// ours with the given settings (each element an object of environment variables), "peer" for the lean peer and "bare" for
// ../shared/peers/fastify-bare ("sameWork" or "sameWork:<features>" for bench/sameWork/server.mjs), all pinned to core 1, 10 s warm-up each, then interleaved rounds; prints each
// server's cold start, req/s, server CPU µs per request and peak RSS. For quick A/B checks of one change:
// e.g. '[{}, {"LOG_LEVEL":"warn"}, "baseline"]'. A variant's ENTRY runs another build than dist/server.js,
// to compare two builds: cp -r dist dist-before (beside node_modules, which it imports), change, then
// '[{"ENTRY":"dist-before/server.js"}, {}]'. npm run bench is the reference run.
import { randomBytes } from 'node:crypto';
import {
  baselineSpec,
  benchDatabase,
  parseBaseline,
  storeBenchKey,
  namedScenarios,
  interleaved,
  pinSelf,
  recreateDatabase,
  seedPets,
  startServer,
  fmt,
  type Scenario,
  type Server,
  type ServerSpec,
} from './lib.js';

const [which = 'getPet', variantsText = '[{}, "baseline"]', secondsText = '5', roundsText = '3'] =
  process.argv.slice(2);
const key = `bench_${randomBytes(24).toString('base64url')}`;
const authorization = `Bearer ${key}`;
const urls = await benchDatabase();
pinSelf();
await recreateDatabase(urls);
const maxId = await seedPets(urls.bench, 10000);
await storeBenchKey(urls.bench, key);
const scenarios: Record<string, Scenario> = namedScenarios(maxId);
const variants = JSON.parse(variantsText) as (Record<string, string> | string)[];
let port = 3300;
const servers: Server[] = [];
for (const variant of variants) {
  const base = parseBaseline(variant);
  let spec: ServerSpec;
  if (typeof variant === 'string') {
    if (!base) throw new Error(`unknown variant ${variant}`);
    spec = baselineSpec(base.kind, { name: variant, databaseUrl: urls.bench, key, port: port++, ...base });
  } else {
    spec = {
      name: JSON.stringify(variant),
      args: [variant['ENTRY'] ?? 'dist/server.js'],
      env: {
        DATABASE_URL: urls.bench,
        BOOTSTRAP_API_KEY: key,
        LOG_LEVEL: 'info',
        RATE_LIMIT_MAX: '1000000',
        DRAIN_DELAY_MS: '0',
        METRICS_PORT: String(port + 1000),
        ...variant,
      },
      port: port++,
      cores: '1',
      authorization,
    };
  }
  servers.push(await startServer(spec));
  process.stderr.write(`${servers.at(-1)!.name}: cold start ${servers.at(-1)!.coldStartMs.toFixed(0)} ms\n`);
}
const results = await interleaved(
  servers,
  scenarios[which]!,
  { rounds: Number(roundsText), seconds: Number(secondsText), warmupSeconds: 10, connections: 20, authorization },
  (l) => process.stderr.write(l + '\n'),
);
for (const [i, r] of results.entries())
  process.stdout.write(
    `${servers[i]!.name}: ${fmt(r.rps)} req/s, ${fmt(r.cpuUsPerRequest, 1)} µs/req, rss ${fmt(r.rssMiB)}\n`,
  );
await Promise.all(servers.map((s) => s.stop()));
process.exit(0);

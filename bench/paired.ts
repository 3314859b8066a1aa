// npm run bench -- paired <list20|list100|getPet|createPet> <entry A> <entry B> [seconds] [rounds]: two
// builds of ours (e.g. dist-before/server.js and dist/server.js), both pinned to core 1 and driven at the
// same time, 10 connections each, in rounds; prints each round's server CPU per request and the median,
// smallest and largest of the per-round ratios B ÷ A. On a shared host the CPU a request costs moves with
// what the neighbours do (rounds of the interleaved bench swing ±25 %): two servers measured in the same
// seconds see the same neighbours, so their ratio holds still where the one-after-the-other ratio does not.
import { randomBytes } from 'node:crypto';
import {
  benchDatabase,
  drive,
  fmt,
  median,
  namedScenarios,
  pinSelf,
  recreateDatabase,
  seedPets,
  startServer,
  storeBenchKey,
  type Sample,
  type Scenario,
  type Server,
} from './lib.js';

const [which = 'getPet', entryA, entryB, secondsText = '3', roundsText = '15'] = process.argv.slice(2);
if (!entryA || !entryB) {
  process.stderr.write('usage: npm run bench -- paired <load> <entry A> <entry B> [seconds] [rounds]\n');
  process.exit(2);
}
const key = `bench_${randomBytes(24).toString('base64url')}`;
const authorization = `Bearer ${key}`;
const urls = await benchDatabase();
process.stderr.write(`${pinSelf()}\n`);
await recreateDatabase(urls);
const scenarios: Record<string, Scenario> = namedScenarios(await seedPets(urls.bench, 10000));
const scenario = scenarios[which];
if (!scenario) throw new Error(`the load: one of list20, list100, getPet, createPet; got ${which}`);
await storeBenchKey(urls.bench, key);

let port = 3400;
const start = (entry: string): Promise<Server> =>
  startServer({
    name: entry,
    args: [entry],
    env: { DATABASE_URL: urls.bench, BOOTSTRAP_API_KEY: key, RATE_LIMIT_MAX: '1000000', DRAIN_DELAY_MS: '0' },
    port: port++,
    cores: '1',
    authorization,
  });
const servers = [await start(entryA), await start(entryB)] as const;
const both = (seconds: number) =>
  Promise.all(servers.map((server) => drive(server, scenario, { seconds, connections: 10, authorization })));
await both(10); // warm-up: the JIT needs it
const ratios: number[] = [];
for (let round = 1; round <= Number(roundsText); round++) {
  const [a, b] = (await both(Number(secondsText))) as [Sample, Sample];
  if (a.failures + b.failures > 0) throw new Error(`round ${round}: ${a.failures + b.failures} failed requests`);
  ratios.push(b.cpuUsPerRequest / a.cpuUsPerRequest);
  process.stderr.write(
    `round ${round}: A ${fmt(a.cpuUsPerRequest, 1)} µs/req (${fmt(a.rps)} req/s), B ${fmt(b.cpuUsPerRequest, 1)} µs/req (${fmt(b.rps)} req/s), B ÷ A ${fmt(ratios.at(-1)!, 3)}\n`,
  );
}
process.stdout.write(
  `${which}: server CPU per request B ÷ A (${entryB} ÷ ${entryA}), ${ratios.length} rounds of ${secondsText} s: ` +
    `median ${fmt(median(ratios), 3)} (${fmt(Math.min(...ratios), 3)}–${fmt(Math.max(...ratios), 3)})\n`,
);
await Promise.all(servers.map((server) => server.stop()));
process.exit(0);

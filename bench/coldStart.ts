// npm run bench -- cold '<JSON array>' [starts]: the cold start (spawn to the first 200 on GET
// /v1/pets?limit=1, built code, PostgreSQL) of each variant, interleaved, `starts` times each (default 7),
// and the median; variants as in bench -- variants (an object of environment variables, ENTRY for another
// build, "baseline" for the bare one, "sameWork" or "sameWork:<features>"). Also the CPU each used until its
// first 200: a start is mostly CPU. Default: ours, the same-work baseline and the bare one.
// COLD_PROFILE_DIR=<folder>: each start also writes a --cpu-prof profile there (spawn to SIGTERM after
// the first 200), for `tsx bench/profileSummary.ts <file> 1 <seconds>` side by side.
import { randomBytes } from 'node:crypto';
import {
  baselineSpec,
  cpuSeconds,
  benchDatabase,
  fmt,
  median,
  parseBaseline,
  pinSelf,
  recreateDatabase,
  seedPets,
  startServer,
  storeBenchKey,
  type ServerSpec,
} from './lib.js';

const [variantsText = '[{}, "sameWork", "baseline"]', startsText = '7'] = process.argv.slice(2);
const key = `bench_${randomBytes(24).toString('base64url')}`;
const urls = await benchDatabase();
pinSelf();
await recreateDatabase(urls);
await seedPets(urls.bench, 1000);
await storeBenchKey(urls.bench, key);
const variants = JSON.parse(variantsText) as (Record<string, string> | string)[];
const nameOf = (variant: Record<string, string> | string) =>
  typeof variant === 'string' ? variant : JSON.stringify(variant);
const timings = variants.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
for (let round = 0; round < Number(startsText); round++) {
  for (const [index, variant] of variants.entries()) {
    const port = 3400 + index;
    let spec: ServerSpec;
    if (typeof variant === 'string') {
      const base = parseBaseline(variant);
      if (!base) throw new Error(`unknown variant ${variant}`);
      spec = baselineSpec(base.kind, { name: variant, databaseUrl: urls.bench, key, port, ...base });
    } else {
      spec = {
        name: nameOf(variant),
        args: [variant['ENTRY'] ?? 'dist/server.js'],
        env: { DATABASE_URL: urls.bench, BOOTSTRAP_API_KEY: key, DRAIN_DELAY_MS: '0', ...variant },
        port,
        cores: '1',
        authorization: `Bearer ${key}`,
      };
    }
    const profileDir = process.env['COLD_PROFILE_DIR'];
    if (profileDir) spec = { ...spec, args: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, ...spec.args] };
    const server = await startServer(spec);
    timings[index]!.cpu.push(cpuSeconds(server.pid) * 1000);
    timings[index]!.wall.push(server.coldStartMs);
    await server.stop();
  }
}
for (const [index, variant] of variants.entries()) {
  const { wall, cpu } = timings[index]!;
  process.stdout.write(
    `${nameOf(variant)}: cold start median ${fmt(median(wall))} ms ` +
      `(${wall.map((ms) => fmt(ms)).join(', ')}), CPU until the first 200 median ${fmt(median(cpu))} ms\n`,
  );
}
process.exit(0);

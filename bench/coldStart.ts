// npm run bench:cold -- '<JSON array>' [starts]: the cold start (spawn to the first 200 on GET
// /v1/pets?limit=1, built code, PostgreSQL) of each variant, interleaved, `starts` times each (default 7),
// and the median; variants as in bench:variants (an object of environment variables, ENTRY for another
// build, or "baseline"). Also the CPU each used until its first 200: a start is mostly CPU.
import { randomBytes } from 'node:crypto';
import { cpuSeconds, databaseUrls, fmt, median, pinSelf, recreateDatabase, seedPets, startServer } from './lib.js';

const [variantsText = '[{}, "baseline"]', startsText = '7'] = process.argv.slice(2);
const key = `bench_${randomBytes(24).toString('base64url')}`;
pinSelf();
const urls = databaseUrls();
await recreateDatabase(urls);
await seedPets(urls.bench, 1000);
const variants = JSON.parse(variantsText) as (Record<string, string> | 'baseline')[];
const timings = variants.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
for (let round = 0; round < Number(startsText); round++) {
  for (const [index, variant] of variants.entries()) {
    const isBase = variant === 'baseline';
    const server = await startServer({
      name: isBase ? 'baseline' : JSON.stringify(variant),
      args: [isBase ? 'bench/baseline/server.mjs' : (variant['ENTRY'] ?? 'dist/server.js')],
      env: isBase
        ? { DATABASE_URL: urls.bench, BASELINE_API_KEY: key }
        : { DATABASE_URL: urls.bench, BOOTSTRAP_API_KEY: key, DRAIN_DELAY_MS: '0', ...variant },
      port: 3400 + index,
      cores: '1',
      authorization: `Bearer ${key}`,
    });
    timings[index]!.cpu.push(cpuSeconds(server.pid) * 1000);
    timings[index]!.wall.push(server.coldStartMs);
    await server.stop();
  }
}
for (const [index, variant] of variants.entries()) {
  const { wall, cpu } = timings[index]!;
  process.stdout.write(
    `${variant === 'baseline' ? 'baseline' : JSON.stringify(variant)}: cold start median ${fmt(median(wall))} ms ` +
      `(${wall.map((ms) => fmt(ms)).join(', ')}), CPU until the first 200 median ${fmt(median(cpu))} ms\n`,
  );
}
process.exit(0);

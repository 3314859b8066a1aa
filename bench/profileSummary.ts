// tsx bench/profileSummary.ts <file.cpuprofile> <requests> <seconds> [top]: sums a --cpu-prof profile of
// bench/profile.ts over the last <seconds> of samples (the load; the start is left out) and prints sampled
// µs per request, self time, by package (node_modules/<name>, ours = dist/ or bench/, node internals,
// garbage collection), by feature of the contract's per-request work (ours: see featureOf) and the top
// functions. Compare two servers' (or two builds') summaries side by side.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  parent?: number;
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, requestsText, secondsText, topText = '25'] = process.argv.slice(2);
if (!file || !requestsText || !secondsText) {
  process.stderr.write('usage: tsx bench/profileSummary.ts <file.cpuprofile> <requests> <seconds> [top]\n');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const requests = Number(requestsText);
const byId = new Map(profile.nodes.map((node) => [node.id, node]));

function packageOf(url: string, name: string): string {
  if (name === '(garbage collector)') return 'gc';
  if (name === '(idle)') return 'idle';
  if (name === '(program)') return 'program';
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (module) return module[1]!;
  if (url.includes('/dist/') || url.includes('/bench/')) return 'ours';
  if (url.startsWith('node:') || url === '') return 'node';
  return url;
}

// Sample times are the start time plus the running sum of the deltas.
const from = profile.endTime - Number(secondsText) * 1e6;
const self = new Map<number, number>();
let at = profile.startTime;
for (let index = 0; index < profile.samples.length; index++) {
  at += profile.timeDeltas[index] ?? 0;
  if (at < from) continue;
  const id = profile.samples[index]!;
  const next = index + 1 < profile.timeDeltas.length ? (profile.timeDeltas[index + 1] ?? 0) : 0;
  self.set(id, (self.get(id) ?? 0) + next);
}

for (const node of profile.nodes) for (const child of node.children ?? []) byId.get(child)!.parent = node.id;

/**
 * The feature of the per-request work a frame's code belongs to, by file
 * (ours: dist/...) or package; undefined for code that serves every feature
 * (node, fastify's request cycle) and for ajv's generated validators, which
 * take the feature of whoever called them.
 */
const featureRules: [RegExp, string][] = [
  [
    /dist[^/]*\/(http\/observation\/requestLines|observability\/(requestLine|requestLogger|requestPath|logging))\.js|node_modules\/(pino|sonic-boom|fast-redact|quick-format-unescaped|on-exit-leak-free)\/|fastify\/lib\/logger-factory\.js/,
    'log line',
  ],
  [
    /dist[^/]*\/(http\/observation\/requestMetrics|observability\/(metrics|batchedObservations|exposeMetrics))\.js|node_modules\/(prom-client|tdigest|bintrees)\//,
    'metric',
  ],
  [
    /dist[^/]*\/http\/admission\/(rateLimit|rateLimitStore|localRateLimit|clientAddress)\.js|node_modules\/toad-cache\//,
    'rate limit and its headers',
  ],
  [/dist[^/]*\/http\/admission\/authentication\.js|dist[^/]*\/auth\//, 'key check'],
  [
    /dist[^/]*\/http\/arrival\/(requestId|securityHeaders)\.js|dist[^/]*\/http\/operations\/deprecation\.js/,
    'request id, security and deprecation headers',
  ],
  [/dist[^/]*\/http\/operations\/conditional\.js/, 'ETag'],
  // Response validation runs inside the serializer (serialization.js): both are one feature now.
  [
    /node_modules\/fast-json-stringify\/|dist[^/]*\/http\/operations\/(serialization|responseAjv)\.js/,
    'response validation and serialization',
  ],
  [/dist[^/]*\/http\/operations\/(validation|jsonBody)\.js|fastify\/lib\/validation\.js/, 'request validation'],
  [/node_modules\/(pg|pg-pool|pg-protocol|pg-types|postgres-[a-z]+)\/|dist[^/]*\/db\//, 'database (pg and src/db)'],
  [/dist[^/]*\/handlers\/|dist[^/]*\/http\/operations\/glue\.js/, 'handler and glue'],
  [
    /dist[^/]*\/http\/(pipeline|server\/connections|arrival\/(stage|hostHeader|repeatedHeaders|expectHeader|draining|startupGate|cors|loadShedding)|admission\/stage|operations\/notFound)\.js|@fastify\/(under-pressure|cors)\//,
    'arrival checks (hosts, headers, draining, load shedding, pipelining bound)',
  ],
];
const ruleOf = (url: string) => featureRules.find(([pattern]) => pattern.test(url))?.[1];

/** A sample's feature: its own frame's, else (node internals, generated code) the nearest caller's that has one. */
function featureOf(id: number): string {
  const { functionName } = byId.get(id)!.callFrame;
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (functionName === '(program)' || functionName === '(idle)') return 'program (V8, not JavaScript)';
  for (let at: number | undefined = id; at !== undefined; at = byId.get(at)!.parent) {
    const frame = byId.get(at)!.callFrame;
    const feature = ruleOf(frame.url);
    if (feature) return feature;
    // Node's and ajv's generated code run for whoever called them; anything else ends the walk.
    if (!(frame.url.startsWith('node:') || frame.url === '')) break;
  }
  return 'the rest: fastify, node:http, sockets';
}

const features = new Map<string, number>();
const packages = new Map<string, number>();
const functions = new Map<string, number>();
for (const [id, micros] of self) {
  const feature = featureOf(id);
  if (byId.get(id)!.callFrame.functionName !== '(idle)') features.set(feature, (features.get(feature) ?? 0) + micros);
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const pkg = packageOf(url, functionName);
  packages.set(pkg, (packages.get(pkg) ?? 0) + micros);
  const where = url.replace(/^.*node_modules\//, '').replace(/^.*\/(dist|bench)\//, '$1/');
  const key = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
  functions.set(key, (functions.get(key) ?? 0) + micros);
}
const perRequest = (micros: number) => (micros / requests).toFixed(2).padStart(8);
const busy = [...packages].filter(([name]) => name !== 'idle').reduce((sum, [, micros]) => sum + micros, 0);
process.stdout.write(`busy (not idle) ${perRequest(busy)} µs/request over ${requests} requests\n\nby package:\n`);
for (const [name, micros] of [...packages].sort((a, b) => b[1] - a[1])) {
  if (name !== 'idle') process.stdout.write(`${perRequest(micros)}  ${name}\n`);
}
process.stdout.write('\nby feature (self time; node internals and generated validators go to their caller):\n');
for (const [name, micros] of [...features].sort((a, b) => b[1] - a[1])) {
  process.stdout.write(`${perRequest(micros)}  ${name}\n`);
}
process.stdout.write('\ntop functions (self):\n');
for (const [name, micros] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, Number(topText))) {
  if (!name.startsWith('(idle)')) process.stdout.write(`${perRequest(micros)}  ${name}\n`);
}

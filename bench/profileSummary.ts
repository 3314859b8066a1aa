// tsx bench/profileSummary.ts <file.cpuprofile> <requests> <seconds> [top]: sums a --cpu-prof profile of
// bench/profile.ts over the last <seconds> of samples (the load; the start is left out) and prints sampled
// µs per request, self time, by package (node_modules/<name>, ours = dist/ or bench/, node internals,
// garbage collection) and the top functions. Compare two servers' summaries side by side.
import { readFileSync } from 'node:fs';

interface ProfileNode {
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

const packages = new Map<string, number>();
const functions = new Map<string, number>();
for (const [id, micros] of self) {
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
process.stdout.write('\ntop functions (self):\n');
for (const [name, micros] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, Number(topText))) {
  if (!name.startsWith('(idle)')) process.stdout.write(`${perRequest(micros)}  ${name}\n`);
}

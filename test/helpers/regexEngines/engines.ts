import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scratchDir } from '../scratchSpace.js';

/**
 * Regular expression engines that readers of openapi.yaml use, each asked
 * the question JSON Schema's `pattern` asks: is the pattern found in the
 * text (a search, not a whole match)? ECMA-262 with and without the `u` flag
 * (JavaScript validators differ), Python's `re` (jsonschema,
 * fastjsonschema), and RE2 (Go's regexp and C++; installed by
 * scripts/ci-system-deps.sh as libre2-dev, built here with g++).
 */
export interface Verdicts {
  /** The engine refuses the pattern itself. */
  error?: string;
  matches?: boolean[];
}

export interface Engine {
  name: string;
  /** RE2 reads UTF-8 bytes, which cannot hold an unpaired surrogate. */
  takesLoneSurrogates: boolean;
  run(pattern: string, texts: string[]): Verdicts;
}

const here = fileURLToPath(new URL('.', import.meta.url));

function ecma(name: string, flags: string): Engine {
  return {
    name,
    takesLoneSurrogates: true,
    run(pattern, texts) {
      let regex: RegExp;
      try {
        regex = new RegExp(pattern, flags);
      } catch (error) {
        return { error: (error as Error).message };
      }
      return { matches: texts.map((text) => regex.test(text)) };
    },
  };
}

const python: Engine = {
  name: 'Python re',
  takesLoneSurrogates: true,
  run(pattern, texts) {
    const result = spawnSync('python3', [join(here, 'pyprobe.py')], {
      input: JSON.stringify({ pattern, texts }),
      encoding: 'utf8',
    });
    if (result.status !== 0) throw new Error(`python3 failed: ${result.error?.message ?? result.stderr}`);
    return JSON.parse(result.stdout) as Verdicts;
  },
};

const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');

/** The RE2 probe, built once into a scratch folder; undefined (with why) when RE2 or g++ is missing. */
function buildRe2(): { engine?: Engine; missing?: string; remove(): void } {
  if (!existsSync('/usr/include/re2/re2.h')) return { missing: 'libre2-dev is not installed', remove: () => undefined };
  const dir = scratchDir('pets-re2-');
  const binary = join(dir.path, 're2probe');
  const built = spawnSync('g++', ['-std=c++17', '-O1', join(here, 're2probe.cc'), '-o', binary, '-lre2'], {
    encoding: 'utf8',
  });
  if (built.status !== 0) {
    dir.remove();
    return {
      missing: `g++ could not build the RE2 probe: ${built.error?.message ?? built.stderr}`,
      remove: () => undefined,
    };
  }
  const engine: Engine = {
    name: 'RE2',
    takesLoneSurrogates: false,
    run(pattern, texts) {
      const result = spawnSync(binary, [], { input: [pattern, ...texts].map(hex).join('\n') + '\n', encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`the RE2 probe failed: ${result.stderr}`);
      const [first = '', ...lines] = result.stdout.trim().split('\n');
      if (first.startsWith('error')) return { error: first.slice('error '.length) };
      return { matches: lines.map((line) => line === '1') };
    },
  };
  return {
    engine,
    remove: () => {
      dir.remove();
    },
  };
}

/** Every engine available here; those missing are named with the reason. */
export function regexEngines(): { engines: Engine[]; missing: string[]; close(): void } {
  const re2 = buildRe2();
  const engines = [ecma('ECMA-262 with u', 'u'), ecma('ECMA-262 without u', ''), python];
  if (re2.engine) engines.push(re2.engine);
  return { engines, missing: re2.missing ? [`RE2: ${re2.missing}`] : [], close: re2.remove };
}

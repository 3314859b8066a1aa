/**
 * Which test files a run needs, chosen by a rule rather than a list kept by hand.
 * usage: tsx scripts/tests/select.ts [--processes] runtime | spec-driven | affected FILE... [--also FILE...]
 * Prints the chosen files of npm test's suite, one a line; says on stderr which rule chose them. With
 * --processes, each line is the file tap runs for it, a tab, and the file: a file of a folder that runs in one
 * process (test/helpers/oneProcess.ts) runs in its folder's process, which loads the chosen files only.
 *
 *   runtime      what can behave differently on another Node.js line (./rules.ts, usesRuntime)
 *   spec-driven  what a new operation in openapi.yaml can change: what reads a spec's operations, less what
 *                judges the tools on specs of their own (./rules.ts, specDriven)
 *   affected     what imports (directly or through others) any FILE given: the import graph; openapi.yaml
 *                counts as read by every file that reads a spec's operations (./rules.ts, readsSpec)
 * --also adds files (the worked examples' own tests) whatever the rule says.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../lib/repoRoot.js';
import { modulesReaching } from './importGraph.js';
import { randomInputMakers, readsSpec, runtimeBuiltins, specDriven, specJudgingFolders, usesRuntime } from './rules.js';

const source = (file: string) => readFileSync(join(repoRoot, file), 'utf8');

/** The spec, which no module imports: the files that read a spec's operations stand for its importers. */
const specFile = 'openapi.yaml';

/** A file that runs a whole folder in one process (test/helpers/oneProcess.ts), and which folder. */
function folderRun(file: string): string | undefined {
  const folder = /runTestFilesOf\(new URL\('\.\/([^']+)\/'/.exec(source(file))?.[1];
  return folder === undefined ? undefined : join('test', folder);
}

interface SuiteFile {
  file: string;
  /** The file tap runs for it: its folder's one process, or itself. */
  tapFile: string;
}

/** npm test's files as suiteFiles lists them, each with the file tap runs for it. */
function suiteFilesAndProcesses(): SuiteFile[] {
  const listed = execFileSync(join(repoRoot, 'node_modules/.bin/tap'), ['list'], { cwd: repoRoot, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
  return listed.flatMap((tapFile) => {
    const folder = folderRun(tapFile);
    if (folder === undefined) return [{ file: tapFile, tapFile }];
    return readdirSync(join(repoRoot, folder))
      .filter((name) => name.endsWith('.test.ts'))
      .sort()
      .map((name) => ({ file: join(folder, name), tapFile }));
  });
}

/** npm test's files, a one-process folder run replaced by the files of its folder. */
export function suiteFiles(): string[] {
  return suiteFilesAndProcesses().map(({ file }) => file);
}

/** Files of the suite whose import graph reaches any of the targets (dependency-cruiser's --reaches). */
function affectedBy(suite: string[], targets: string[]): string[] {
  const reached = modulesReaching(targets);
  return suite.filter((file) => reached.has(file));
}

function main(allArgs: string[]): void {
  const processes = allArgs[0] === '--processes';
  const args = processes ? allArgs.slice(1) : allArgs;
  const alsoAt = args.indexOf('--also');
  const also = alsoAt < 0 ? [] : args.slice(alsoAt + 1);
  const [rule, ...targets] = alsoAt < 0 ? args : args.slice(0, alsoAt);
  const suiteAndProcesses = suiteFilesAndProcesses();
  const suite = suiteAndProcesses.map(({ file }) => file);
  let chosen: string[];
  let why: string;
  switch (rule) {
    case 'runtime':
      chosen = suite.filter((file) => usesRuntime(file, source(file)));
      why = `use a runtime built-in (${runtimeBuiltins.join(', ')}; crypto for more than ${randomInputMakers.join(', ')}, child_process to start Node.js) or call fetch, outside ${specJudgingFolders.join(', ')}`;
      break;
    case 'spec-driven':
      chosen = suite.filter((file) => specDriven(file, source(file)));
      why = "read a spec's operations, outside test/constructs/ and the files of test/contract/ that judge the gate";
      break;
    case 'affected': {
      const missing = targets.filter((target) => !existsSync(target));
      if (targets.length === 0 || missing.length > 0) {
        process.stderr.write(
          `affected needs existing files${missing.length ? `; not found: ${missing.join(', ')}` : ''}\n`,
        );
        process.exit(2);
      }
      const modules = targets.filter((target) => target !== specFile);
      const spec = modules.length < targets.length ? suite.filter((file) => readsSpec(source(file))) : [];
      chosen = [...(modules.length > 0 ? affectedBy(suite, modules) : []), ...spec];
      why = [
        modules.length > 0 ? `import ${modules.join(', ')}, directly or through other modules` : '',
        spec.length > 0 ? `read a spec's operations (${specFile})` : '',
      ]
        .filter(Boolean)
        .join(', or ');
      break;
    }
    default:
      process.stderr.write(
        'usage: tsx scripts/tests/select.ts [--processes] runtime | spec-driven | affected FILE... [--also FILE...]\n',
      );
      process.exit(2);
  }
  const files = [...new Set([...chosen, ...also])];
  process.stderr.write(
    `${files.length} of ${suite.length} test files: those that ${why}${also.length ? `, and ${also.join(', ')}` : ''}\n`,
  );
  const tapFileOf = new Map(suiteAndProcesses.map(({ file, tapFile }) => [file, tapFile]));
  const lines = processes ? files.map((file) => `${tapFileOf.get(file) ?? file}\t${file}`) : files;
  process.stdout.write(lines.map((line) => `${line}\n`).join(''));
}

main(process.argv.slice(2));

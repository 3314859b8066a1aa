// Writes a Markdown file's steps, the fenced blocks under the named headings, as one bash script that runs
// them as a reader would, in order: a sh block is run as it stands; a ts (or js) block is saved under the
// file name its first line gives (`// first-call.mts`), as the reader saves it before the command that runs
// it. usage: tsx scripts/docs/readmeSteps.ts <file.md> <heading>... > steps.sh
// Fails when a heading has no block, or a block has a language or a first line it cannot place.
import { readFileSync } from 'node:fs';
import { blocksUnder, type CodeBlock } from '../../lib/markdown.js';

const [file, ...headings] = process.argv.slice(2);
if (file === undefined || headings.length === 0) {
  console.error('usage: tsx scripts/docs/readmeSteps.ts <file.md> <heading>...');
  process.exit(2);
}
const markdown = readFileSync(file, 'utf8');

function fail(message: string): never {
  console.error(`${file}: ${message}`);
  process.exit(1);
}

/** The block as bash: itself, or a here-document saving it under the name its first line gives. */
function step(block: CodeBlock): string {
  const where = `# ${file}:${block.line}, under "${block.heading}"`;
  if (block.language === 'sh' || block.language === 'bash') return `${where}\n${block.text}`;
  if (['ts', 'typescript', 'js', 'javascript'].includes(block.language)) {
    const name = /^\/\/\s*([\w.-]+\.[cm]?[jt]s)\b/.exec(block.text)?.[1];
    if (name === undefined)
      fail(`line ${block.line}: a ${block.language} block must name its file on its first line (// name.mts)`);
    let delimiter = 'END_OF_BLOCK';
    while (block.text.includes(delimiter)) delimiter += '_';
    return `${where}\ncat > ${name} <<'${delimiter}'\n${block.text}${delimiter}\n`;
  }
  return fail(`line ${block.line}: a block in "${block.language || 'no language'}" is not a step it can run`);
}

const steps = headings.flatMap((heading) => {
  const blocks = blocksUnder(markdown, heading);
  if (blocks.length === 0) fail(`no code block under a heading "${heading}"`);
  return blocks.map(step);
});
process.stdout.write(['set -euxo pipefail', ...steps].join('\n'));

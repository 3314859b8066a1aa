// Reading the repository's Markdown as GitHub renders it: fenced code blocks with the heading they sit under,
// the relative links of the prose, and the anchors its headings make. Shared by the docs' tests and the CI
// step that runs a README's blocks as written (scripts/docs/).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export interface CodeBlock {
  /** The info string's first word: `sh`, `ts`, ... (empty when none). */
  language: string;
  /** The text between the fences, ending with a newline. */
  text: string;
  /** The nearest heading above the block, without its #s. */
  heading: string;
  /** 1-based line of the opening fence. */
  line: number;
}

export interface Link {
  target: string;
  line: number;
}

const fence = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/;
const heading = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;

interface Line {
  text: string;
  number: number;
  /** The fenced block this line opens, if it does. */
  opens?: { marker: string; language: string };
}

/** Splits a document into the prose lines and the fenced blocks (each block as its opening line and body). */
function scan(markdown: string): { prose: Line[]; blocks: CodeBlock[] } {
  const lines = markdown.split('\n');
  const prose: Line[] = [];
  const blocks: CodeBlock[] = [];
  let current = '';
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] ?? '';
    const open = fence.exec(text);
    if (open === null) {
      const title = heading.exec(text);
      if (title !== null) current = title[2] ?? '';
      prose.push({ text, number: i + 1 });
      continue;
    }
    const marker = open[1] ?? '```';
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const closing = lines[j] ?? '';
      if (closing.trimStart().startsWith(marker) && closing.trim().replaceAll(marker[0] ?? '`', '') === '') break;
      body.push(closing);
    }
    blocks.push({
      language: open[2] ?? '',
      text: body.length === 0 ? '' : `${body.join('\n')}\n`,
      heading: current,
      line: i + 1,
    });
    i = j;
  }
  return { prose, blocks };
}

/** Every fenced code block, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  return scan(markdown).blocks;
}

/** The fenced code blocks directly under the heading with this exact text (up to the next heading). */
export function blocksUnder(markdown: string, title: string): CodeBlock[] {
  return codeBlocks(markdown).filter((block) => block.heading === title);
}

/** The targets of the prose's links and images (inline `[text](target)` and `<a href>`), code spans left out. */
export function links(markdown: string): Link[] {
  const found: Link[] = [];
  for (const { text, number } of scan(markdown).prose) {
    const prose = text.replace(/(`+)[\s\S]*?\1/g, '');
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      found.push({ target: match[1] ?? '', line: number });
    for (const match of prose.matchAll(/<a\s[^>]*href="([^"]+)"/gi))
      found.push({ target: match[1] ?? '', line: number });
  }
  return found;
}

/** A link to another site or scheme (http:, mailto:, ...), which a file check cannot judge. */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');
}

/**
 * The anchors GitHub gives the document's headings: lower-cased, punctuation dropped, spaces as hyphens,
 * a repeated one suffixed -1, -2, ...
 */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const { text } of scan(markdown).prose) {
    const title = heading.exec(text)?.[2];
    if (title === undefined) continue;
    const plain = title
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/[`*_~]/g, (character) => (character === '_' ? '_' : ''));
    const slug = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

/** Words outside fenced code blocks (a table's cells count; its pipes and rule lines do not). */
export function proseWords(markdown: string): number {
  return scan(markdown)
    .prose.map(({ text }) => text.replace(/[|]/g, ' ').replace(/(^|\s)[-:]+(?=\s|$)/g, ' '))
    .join('\n')
    .split(/\s+/)
    .filter((word) => /[\p{L}\p{N}]/u.test(word)).length;
}

/** A relative link that names no file, or no heading in the Markdown file it names. */
export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  reason: string;
}

/**
 * The relative links of these Markdown files (paths from root) that name no file or folder in root, or a
 * `#anchor` no heading of the named Markdown file makes.
 */
export function brokenLinks(root: string, files: readonly string[]): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const anchorsIn = (path: string) => {
    let found = anchorsOf.get(path);
    if (found === undefined) anchorsOf.set(path, (found = anchors(readFileSync(path, 'utf8'))));
    return found;
  };
  for (const file of files) {
    const source = join(root, file);
    for (const { target, line } of links(readFileSync(source, 'utf8'))) {
      if (isExternal(target)) continue;
      const [pathPart = '', anchor] = target.split('#', 2);
      const path = pathPart === '' ? source : resolve(dirname(source), decodeURIComponent(pathPart));
      const report = (reason: string) => broken.push({ file, line, target, reason });
      if (relative(root, path).startsWith('..')) report('points outside the repository');
      else if (!existsSync(path)) report(`no such file: ${relative(root, path)}`);
      else if (anchor !== undefined && anchor !== '' && path.endsWith('.md') && statSync(path).isFile()) {
        if (!anchorsIn(path).has(decodeURIComponent(anchor).toLowerCase()))
          report(`no heading in ${relative(root, path)} makes #${anchor}`);
      }
    }
  }
  return broken;
}

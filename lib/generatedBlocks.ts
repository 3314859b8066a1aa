// Generated blocks inside hand-written text: the lines between
//   <!-- BEGIN generated: NAME -->
//   <!-- END generated: NAME -->
// belong to npm run generate; everything around them to the writer. The block keeps the indentation of its
// BEGIN line, so the same markers work in Markdown and inside a YAML block scalar (openapi.yaml's descriptions).

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The blocks named `name` (a regular expression's source, escaped unless `pattern`), with their markers. */
export function blockPattern(name: string, pattern = false): RegExp {
  const id = pattern ? name : escape(name);
  return new RegExp(
    `^([ \\t]*)(<!-- BEGIN generated: ${id} -->)\\n[\\s\\S]*?^[ \\t]*(<!-- END generated: ${id} -->)$`,
    'gm',
  );
}

/** `text` with every block named `name` holding `content`; throws when the text has no such block. */
export function withBlock(text: string, name: string, content: string, where: string): string {
  const pattern = blockPattern(name);
  if (text.search(pattern) === -1)
    throw new Error(`${where}: no <!-- BEGIN generated: ${name} --> ... <!-- END generated: ${name} --> block`);
  return text.replace(pattern, (_match, indent: string, begin: string, end: string) => {
    const lines = content
      .trimEnd()
      .split('\n')
      .map((line) => (line === '' ? '' : `${indent}${line}`));
    return [`${indent}${begin}`, ...lines, `${indent}${end}`].join('\n');
  });
}

/** The lines of the first block named `name` (unindented), or undefined when the text has none. */
export function blockContent(text: string, name: string): string | undefined {
  const match = new RegExp(blockPattern(name).source, 'm').exec(text);
  if (!match) return undefined;
  const indent = match[1] ?? '';
  return match[0]
    .split('\n')
    .slice(1, -1)
    .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
    .join('\n');
}

/**
 * JSON text, indented as JSON.stringify(value, null, 2) does, of a value
 * parsed with yaml's `intAsBigInt`: each BigInt is written as its exact
 * digits. JSON.stringify refuses BigInts, and a JavaScript number would round
 * the int64 bounds of openapi.yaml (9223372036854775807 becomes
 * 9223372036854776000).
 */
export function toExactJson(value: unknown, indent = ''): string {
  const inner = `${indent}  `;
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) {
    return enclose(
      '[',
      ']',
      indent,
      (value as unknown[]).map((item) => inner + toExactJson(item, inner)),
    );
  }
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).map(
      ([key, member]) => `${inner}${JSON.stringify(key)}: ${toExactJson(member, inner)}`,
    );
    return enclose('{', '}', indent, members);
  }
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`${value} has no JSON form`);
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) throw new Error(`a ${typeof value} has no JSON form`);
  return text;
}

function enclose(open: string, close: string, indent: string, lines: string[]): string {
  return lines.length === 0 ? open + close : `${open}\n${lines.join(',\n')}\n${indent}${close}`;
}

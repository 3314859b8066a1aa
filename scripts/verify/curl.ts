import type { OutgoingRequest } from './http.js';

/**
 * A request as a curl command line a person can paste into bash to see the
 * answer again. The API key never appears: it is written as ${API_KEY}
 * (set it before pasting), and a value built from the key in another way
 * (split, base64) is replaced by a note, so a report or a CI artifact does
 * not leak it.
 */

/** bash's $'...' quoting: every byte outside printable ASCII (and ' and \) escaped, so NULs and newlines survive. */
function ansiQuote(text: string | Uint8Array): string {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : Buffer.from(text);
  let quoted = '';
  for (const byte of bytes) {
    if (byte === 0x27 || byte === 0x5c) quoted += `\\${String.fromCharCode(byte)}`;
    else if (byte >= 0x20 && byte < 0x7f) quoted += String.fromCharCode(byte);
    else quoted += `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  return `$'${quoted}'`;
}

/** "..." quoting in which only ${API_KEY} is expanded, standing for the key. */
function withKeyVariable(text: string, key: string): string {
  const escape = (part: string) => part.replace(/[\\"$`]/g, (char) => `\\${char}`);
  return `"${text.split(key).map(escape).join('${API_KEY}')}"`;
}

const keyWindow = 8;

/** Whether the value carries a part of the key (8 characters or more), as text or inside base64. */
function carriesKeyPart(value: string, key: string): boolean {
  const decoded = value
    .split(/\s+/)
    .map((word) => Buffer.from(word, 'base64').toString('latin1'))
    .join(' ');
  for (let start = 0; start + keyWindow <= key.length; start += 1) {
    const part = key.slice(start, start + keyWindow);
    if (value.includes(part) || decoded.includes(part)) return true;
  }
  return false;
}

function headerArgument(name: string, value: string, key: string): string {
  // Printable text only inside "...": fetch refuses anything else in a header anyway.
  if (key !== '' && value.includes(key) && /^[ -~]*$/.test(value)) return withKeyVariable(`${name}: ${value}`, key);
  if (key !== '' && carriesKeyPart(value, key)) return ansiQuote(`${name}: <built from the API key, not shown>`);
  return ansiQuote(`${name}: ${value}`);
}

export function curlLine(request: OutgoingRequest, key: string): string {
  const parts = ['curl', '-sS', '-i', '-X', request.method, ansiQuote(request.url)];
  for (const [name, value] of Object.entries(request.headers)) parts.push('-H', headerArgument(name, value, key));
  if (request.body !== undefined) {
    // Without this curl would add a form Content-Type the request did not have.
    if (!Object.keys(request.headers).some((name) => name.toLowerCase() === 'content-type'))
      parts.push('-H', ansiQuote('Content-Type:'));
    parts.push('--data-binary', ansiQuote(request.body));
  }
  return parts.join(' ');
}

/** How many characters of client input a message may quote. */
export const excerptCharacters = 40;

/** The longest message the Error object may carry (openapi.yaml, Error.message maxLength). */
export const messageMaxLength = 1000;

/**
 * Client input as a message may quote it: at most excerptCharacters code
 * points, JSON-escaped (quotes, backslashes, control characters and lone
 * surrogates are shown as escapes, never raw), and marked with the full
 * length when cut. Every message that echoes a name, path or value the client
 * sent goes through here, so no message grows with the input.
 */
export function excerpt(input: string, characters = excerptCharacters): string {
  const codePoints = Array.from(input);
  const shown = JSON.stringify(codePoints.slice(0, characters).join('')).slice(1, -1);
  return codePoints.length > characters ? `${shown}... (${codePoints.length} characters)` : shown;
}

/** A last bound on any message, whatever produced it: the Error object never breaks its own schema. */
export function boundedMessage(message: string): string {
  if (message.length <= messageMaxLength) return message;
  const cut = Array.from(message.slice(0, messageMaxLength - 3));
  // A surrogate pair cut in half would leave an unpaired surrogate.
  const last = cut[cut.length - 1] ?? '';
  if (last.length === 1 && /[\uD800-\uDBFF]/.test(last)) cut.pop();
  return `${cut.join('')}...`;
}

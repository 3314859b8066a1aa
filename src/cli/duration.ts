const units = { d: 86_400, h: 3_600, m: 60, s: 1 } as const;
const durationPattern = /^([0-9]{1,9})([dhms])$/;

/** Seconds in a duration such as `90d`, `12h`, `30m` or `45s`; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const match = durationPattern.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * units[match[2] as keyof typeof units];
}

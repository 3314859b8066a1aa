const units = { d: 86_400, h: 3_600, m: 60, s: 1 } as const;
// Up to 12 digits, so that a long number is refused for its size, with the bound, not for its form.
const durationPattern = /^([0-9]{1,12})([dhms])$/;

/** Seconds in a duration such as `90d`, `12h`, `30m` or `45s`; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const match = durationPattern.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * units[match[2] as keyof typeof units];
}

export interface DurationRule {
  /** The option's name, without the dashes. */
  option: string;
  /** Whether 0 (0s, 0d...) means something: the overlap's "at once". */
  zero: boolean;
  maxSeconds: number;
}

/** A bound in the largest unit that divides it: 366d, 30d, 12h. */
export function formatDuration(seconds: number): string {
  for (const [unit, size] of Object.entries(units)) if (seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}

/** The seconds the text says, or the message that names the accepted form and the bound. */
export function boundedDuration(text: string, rule: DurationRule): number | { problem: string } {
  const seconds = parseDuration(text);
  if (seconds !== undefined && seconds <= rule.maxSeconds && (rule.zero || seconds > 0)) return seconds;
  const least = rule.zero ? '' : ' above 0';
  return {
    problem:
      `--${rule.option} takes a whole number of days, hours, minutes or seconds${least}: 90d, 12h, 30m, 45s, ` +
      `at most ${formatDuration(rule.maxSeconds)}; got ${text}`,
  };
}

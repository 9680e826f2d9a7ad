// Parses the profile's human durations ("500ms", "10s", "1m", "2h", "7d") into milliseconds.
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

export function parseDuration(text: string): number {
  const match = PATTERN.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a duration (use e.g. 500ms, 10s, 1m, 2h, 7d)`);
  return Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
}

/** Formats milliseconds the way the profile writes them, for logs and API responses. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1_000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** Parses operator durations such as `30d`, `12h`, `15m`, `90s` into seconds; undefined when malformed. */
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

export function parseDuration(text: string): number | undefined {
  const m = /^(\d{1,9})([smhdw])$/.exec(text.trim());
  if (!m) return undefined;
  const seconds = Number(m[1]) * UNIT_SECONDS[m[2]!]!;
  return seconds > 0 ? seconds : undefined;
}

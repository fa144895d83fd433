// k6 durations: Go duration strings, `Nd` days, or a bare number of milliseconds.

/** Nanoseconds per unit of a Go duration string (plus k6's `d`). */
const UNIT_NS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  μs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
  d: 86_400e9,
};

const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)/y;

/**
 * Parses a k6 duration into integer nanoseconds: `"1m30s"`, `"500ms"`, `"1.5s"`, `"2d"`,
 * or a number (milliseconds, as k6 reads a bare number). Returns undefined when malformed
 * or negative. Fractions are truncated to whole nanoseconds, like Go.
 */
export function parseDurationNs(value: unknown): number | undefined {
  if (typeof value === 'number')
    return Number.isFinite(value) && value >= 0 ? Math.trunc(value * 1e6) : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (text === '0') return 0;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.trunc(Number(text) * 1e6);
  if (text === '') return undefined;
  let total = 0;
  PART.lastIndex = 0;
  let matched = 0;
  while (PART.lastIndex < text.length) {
    const match = PART.exec(text);
    if (!match) return undefined;
    total += Number(match[1]) * UNIT_NS[match[2]!]!;
    matched++;
  }
  return matched > 0 ? Math.trunc(total) : undefined;
}

/** Formats nanoseconds the way k6 prints durations in messages (`1m30s`, `500ms`). */
export function formatDurationNs(ns: number): string {
  if (ns === 0) return '0s';
  if (ns < 1e6) return `${ns / 1e3}µs`;
  if (ns < 1e9) return `${Number((ns / 1e6).toFixed(3))}ms`;
  let seconds = ns / 1e9;
  const hours = Math.floor(seconds / 3600);
  seconds -= hours * 3600;
  const minutes = Math.floor(seconds / 60);
  seconds -= minutes * 60;
  const s = Number(seconds.toFixed(3));
  return `${hours ? `${hours}h` : ''}${hours || minutes ? `${minutes}m` : ''}${s}s`;
}

// What analysis needs from one k6 sample, whichever format it was read from.

/** One k6 sample, reduced to the fields the client-side aggregation uses. */
export interface ClientSample {
  metric: string;
  /** Epoch seconds (fractional when the format has sub-second precision). */
  timeS: number;
  value: number;
  /** Tag values that matter here; absent tags are undefined. */
  status: string | undefined;
  errorCode: string | undefined;
  scenario: string | undefined;
  /** The `step` tag (from extra_tags in CSV). */
  step: string | undefined;
  /** The `attempt` tag of a script that retries (`1` first, `2` its first retry …). */
  attempt?: string | undefined;
}

/** Counts of what a reader skipped, so a report can say the file was damaged. */
export interface ReadStats {
  rows: number;
  /** Malformed records skipped (NUL blocks, truncated last line, bad quoting). */
  skipped: number;
  /** Bytes of NUL removed before parsing. */
  nulBytes: number;
  /**
   * Why the file ended mid-stream (a gzip file whose writer was killed): it was read to its
   * last whole line. Absent for a file that ended as written.
   */
  cut?: string;
}

/**
 * Parses a k6 timestamp in any `timeFormat`: unix seconds (10 digits), milli (13),
 * micro (16), nano (19), or RFC 3339. Returns epoch seconds, or NaN.
 */
export function parseTimestamp(text: string): number {
  if (/^\d+$/.test(text)) {
    const digits = text.length;
    const n = Number(text);
    if (digits <= 11) return n;
    if (digits <= 14) return n / 1e3;
    if (digits <= 17) return n / 1e6;
    return n / 1e9;
  }
  return Date.parse(text) / 1000;
}

/** The value of `key` in k6's `extra_tags` encoding (`k=v&k=v`, any order, no escaping). */
export function extraTag(extra: string, key: string): string | undefined {
  if (extra === '') return undefined;
  for (const pair of extra.split('&')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq) === key) return pair.slice(eq + 1);
  }
  return undefined;
}

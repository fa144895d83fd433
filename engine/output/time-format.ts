// Go's time formats for outputs: RFC 3339 in the local zone, with nanoseconds trimmed.

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * Formats epoch milliseconds (fractional ms carry µs/ns) as Go's time.RFC3339Nano
 * (`nanos`, trailing zeros trimmed) or time.RFC3339, in the local time zone: `Z` when the
 * offset is zero, otherwise `±hh:mm`.
 */
export function formatRfc3339(timeMs: number, nanos: boolean): string {
  const wholeMs = Math.floor(timeMs);
  const date = new Date(wholeMs);
  const offsetMin = -date.getTimezoneOffset();
  const base =
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  let fraction = '';
  if (nanos) {
    const ns = Math.round((timeMs - Math.floor(timeMs / 1000) * 1000) * 1e6);
    const digits = pad(Math.min(ns, 999_999_999), 9).replace(/0+$/, '');
    fraction = digits ? `.${digits}` : '';
  }
  const zone =
    offsetMin === 0
      ? 'Z'
      : `${offsetMin > 0 ? '+' : '-'}${pad(Math.floor(Math.abs(offsetMin) / 60))}:${pad(Math.abs(offsetMin) % 60)}`;
  return `${base}${fraction}${zone}`;
}

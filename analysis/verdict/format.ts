// Numbers as the verdict writes them.

/** `x` rounded to `digits` decimals, as text without trailing zeros. */
export const fmt = (x: number, digits = 1) => String(Math.round(x * 10 ** digits) / 10 ** digits);

/** The arithmetic mean; 0 for no values. */
export function mean(values: number[]): number {
  return values.length > 0 ? values.reduce((a, b) => a + b, 0) / values.length : 0;
}

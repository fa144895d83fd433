// Exact fractions for execution segments (k6 uses big.Rat).

/** A non-negative fraction num/den in lowest terms. */
export interface Rational {
  readonly num: number;
  readonly den: number;
}

export function gcd(a: number, b: number): number {
  let x = Math.abs(a);
  let y = Math.abs(b);
  while (y) [x, y] = [y, x % y];
  return x;
}

export function lcm(a: number, b: number): number {
  return (a / gcd(a, b)) * b;
}

export function rational(num: number, den = 1): Rational {
  if (den === 0) throw new RangeError('zero denominator');
  const g = gcd(num, den) || 1;
  const sign = den < 0 ? -1 : 1;
  return { num: (sign * num) / g, den: (sign * den) / g };
}

export function sub(a: Rational, b: Rational): Rational {
  return rational(a.num * b.den - b.num * a.den, a.den * b.den);
}

export function compare(a: Rational, b: Rational): number {
  return a.num * b.den - b.num * a.den;
}

export function equals(a: Rational, b: Rational): boolean {
  return compare(a, b) === 0;
}

export const ZERO = rational(0);
export const ONE = rational(1);

/**
 * Parses `1/4`, `25%`, `0.5` or `1` into a fraction. Returns undefined when malformed.
 */
export function parseRational(text: string): Rational | undefined {
  const t = text.trim();
  let match = /^(\d+)\/(\d+)$/.exec(t);
  if (match) return Number(match[2]) === 0 ? undefined : rational(Number(match[1]), Number(match[2]));
  match = /^(\d+(?:\.\d+)?)%$/.exec(t);
  if (match) return decimal(match[1]!, 100);
  match = /^\d+(?:\.\d+)?$/.exec(t);
  if (match) return decimal(t, 1);
  return undefined;
}

function decimal(text: string, divisor: number): Rational {
  const [whole = '0', fraction = ''] = text.split('.');
  const scale = 10 ** fraction.length;
  return rational(Number(whole) * scale + Number(fraction || '0'), scale * divisor);
}

export function formatRational(r: Rational): string {
  return r.den === 1 ? String(r.num) : `${r.num}/${r.den}`;
}

// Numbers written as text (flags, environment variables, __ENV): one parser and one way
// of saying what is accepted, for every command, the engine's flags and the k6 scripts.
// Pure and ES2017, so the scripts' bundles can carry it.

export interface NumberLimits {
  min?: number;
  max?: number;
  integer?: boolean;
}

const DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * A decimal number (`40`, `0.5`, `-3`; surrounding spaces allowed) within `limits`, or
 * undefined. Forms Number() would also take (`1e3`, `0x10`, `''`) are refused: a flag
 * reading `--rate 0x10` is a typo, not sixteen.
 */
export function parseNumberText(raw: string, limits: NumberLimits = {}): number | undefined {
  const text = raw.trim();
  if (!DECIMAL.test(text)) return undefined;
  const value = Number(text);
  const { min = Number.NEGATIVE_INFINITY, max = Number.POSITIVE_INFINITY, integer = false } = limits;
  if (value < min || value > max || (integer && !Number.isInteger(value))) return undefined;
  return value;
}

/** `a whole number of at least 1`, `a number from 0 to 1`: what `limits` accept, in words. */
export function describeRange(limits: NumberLimits = {}): string {
  const { min = Number.NEGATIVE_INFINITY, max = Number.POSITIVE_INFINITY, integer = false } = limits;
  const kind = integer ? 'a whole number' : 'a number';
  if (Number.isFinite(min) && Number.isFinite(max)) return `${kind} from ${min} to ${max}`;
  if (Number.isFinite(min)) return `${kind} of at least ${min}`;
  if (Number.isFinite(max)) return `${kind} of at most ${max}`;
  return kind;
}
